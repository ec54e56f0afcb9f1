"""Releases of the libraries beside torch (config, logging, tokenizers, plots) that broke a script.

Releases of the libraries a training script uses beside torch (its config reader, its logger, its tokenizer, its
plotting) that changed what the script calls, each read from what their source prints (trainer_data_releases.py's
companion: versions.py's ``dependency_version`` leads with either).

- PyYAML 6.0 made ``yaml.load``'s Loader required: ``lib/yaml/__init__.py`` has ``def load(stream, Loader)`` (and
  ``load_all``), where 5.1-5.4 had ``Loader=None`` and warned "calling yaml.load() without Loader=... is
  deprecated". CPython's "load() missing 1 required positional argument: 'Loader'" is a script written for
  PyYAML 5 calling ``yaml.load(f)``: no other load takes a required Loader. Certain;
- ``torch/utils/tensorboard/__init__.py`` refuses the tensorboard it imports: "TensorBoard logging requires
  TensorBoard version 1.15 or above" (torch 1.5 on: ``if not hasattr(tensorboard, "__version__") or
  Version(tensorboard.__version__) < Version("1.15")``; torch 1.1-1.4: "... with Python summary writer installed.
  This should be available in 1.14 or above."). An old tensorboard prints it, and so does a ``tensorboard`` that is
  not the package (a file or folder of that name beside the script, which has no ``__version__``): likely;
- spaCy 3.0 dropped the model shortcuts ("en", "de"): ``spacy/util.py`` ``load_model`` raises ``Errors.E941``
  ("Can't find model '{name}'. It looks like you're trying to load a model from a shortcut, which is obsolete as
  of spaCy v3.0", ``spacy/errors.py``) for a name in ``OLD_MODEL_SHORTCUTS``: code written for spaCy 2 (torchtext's
  ``Field(tokenize='spacy')`` asked for 'en' by default). Certain;
- Matplotlib 3.8 deprecated ``FigureCanvasAgg.tostring_rgb`` (``backends/backend_agg.py``:
  ``@_api.deprecated("3.8", alternative="buffer_rgba")``) and 3.10 removed it; training loops that draw a
  spectrogram or an alignment into TensorBoard call it. "'FigureCanvasAgg' object has no attribute 'tostring_rgb'"
  is that code under Matplotlib 3.10+. Certain;
- transformers 3.x took the old label arguments of its models in ``**kwargs`` and warned ("The
  `masked_lm_labels` argument is deprecated and will be removed in a future version, use `labels` instead.",
  ``modeling_bert.py``, ``modeling_roberta.py``...; ``lm_labels`` likewise, T5's and GPT-2's), and 4.0 removed
  them: "forward() got an unexpected keyword argument 'masked_lm_labels'" is training code written for
  transformers 2-3 under 4.x. No other forward takes those names: certain;
- PyPI's ``sklearn`` is a placeholder whose ``setup.py`` (scikit-learn/sklearn-pypi-package) refuses to install:
  ``maybe_raise_error`` raises SystemExit with "The 'sklearn' PyPI package is deprecated, use 'scikit-learn'"
  (always since its brownout schedule ended, unless SKLEARN_ALLOW_DEPRECATED_SKLEARN_PACKAGE_INSTALL=True). Only
  a requirement that names ``sklearn`` (the project's requirements file or setup.py, or a dependency's) installs it:
  certain;
- Lightning 2.0 dropped ``optimizer_idx`` from the LightningModule hooks (several optimizers under automatic
  optimization went): 1.x's precision plugin called ``configure_gradient_clipping(optimizer, optimizer_idx,
  gradient_clip_val=..., gradient_clip_algorithm=...)``, 2.x's ``_clip_gradients`` calls it without the index, and
  ``optimizer_step``, ``optimizer_zero_grad``, ``on_before_optimizer_step``, ``backward`` and ``training_step`` lost it
  too. CPython's "<hook>() missing 1 required positional argument: 'optimizer_idx'" for one of them is an override
  written for Lightning 1.x run under 2.x: certain;
- PyTorch Geometric 2.0 moved a ``Data`` object's attributes into its ``_store``: ``torch_geometric/data/data.py``
  ``Data.__getattr__`` raises "The 'data' object was created by an older version of PyG. If this error occurred
  while loading an already existing dataset, remove the 'processed/' directory in the dataset's root folder and
  try again." for an object without one, which only an object pickled by PyG 1.x is (``in_memory_dataset.py`` and
  the TUDataset raise the same words for a processed file of the old layout). Processed files are re-made from
  ``raw/`` once deleted; data a repository ships already pickled (a raw file of Data objects, a .pt) has to be
  converted or read under PyG 1.x. Certain;
- rsl_rl's ``OnPolicyRunner`` (``rsl_rl/runners/on_policy_runner.py``, from its multi-GPU support on) builds the
  algorithm with ``alg_class(policy, device=self.device, **self.alg_cfg, multi_gpu_cfg=self.multi_gpu_cfg)``; an
  algorithm class written for an older rsl_rl (a project's own PPO, or an older release's) has no such parameter, and
  CPython says "PPO.__init__() got an unexpected keyword argument 'multi_gpu_cfg'": the installed rsl_rl is newer than
  the training code (NathanWu7/isaacLab.manipulation#6 pinned rsl_rl v2.0.1). A runner of one's own passing it prints
  the same: likely.
- diffusers 0.4.0 (2022-10-06) gave its models ``enable_gradient_checkpointing``: ``ModelMixin`` in
  ``src/diffusers/modeling_utils.py`` got it with huggingface/diffusers#461 (e7120ba, 2022-09-22, UNet2DConditionModel
  the first to support it); 0.3.x's models have no such method, and CPython says "'UNet2DConditionModel' object has
  no attribute 'enable_gradient_checkpointing'" (UNet2DModel, AutoencoderKL, VQModel alike, the models 0.3.0
  exports) when a DreamBooth or fine-tuning script turns gradient checkpointing on under an older diffusers
  (huggingface/diffusers#656, d8ahazard/sd_dreambooth_extension#40). A fork's or a vendored copy's models print the
  same: likely. Another library's model (transformers' is gradient_checkpointing_enable) is not read so.
- RDKit's readers (``Chem.MolFromSmiles``, ``MolFromSmarts``, ``MolFromMolBlock``, ``MolFromMolFile``, an
  ``SDMolSupplier``'s entries) return None for a molecule they cannot parse or sanitize, after logging why ("SMILES
  Parse Error: ...", "Explicit valence for atom # 3 N, 4, is greater than permitted"); the next call on it is
  CPython's "'NoneType' object has no attribute 'GetAtoms'" (or another of a Mol's CamelCase methods: GetNumAtoms,
  GetBonds, GetAtomWithIdx...), which only a Mol's API prints. A dataset's molecules made with a newer RDKit than
  the one installed are the usual cause in a training job (snap-stanford/ogb#133: PCQM4M's SMILES, read by ogb's
  smiles2graph, parse under a newer RDKit); a molecule no RDKit reads prints the same: likely, and says both;
- omegaconf 2.1 made reading a key a ``DictConfig`` lacks an error: ``omegaconf/dictconfig.py`` ``_get_node`` raises
  ``ConfigKeyError(f"Missing key {key!s}")``, which ``cfg.key`` turns into ``ConfigAttributeError: Missing key
  <key>`` (with "full_key: ..." and "object_type=dict" on the lines after); 2.0's ``cfg.key`` returned None for it
  outside struct mode. Code and configs written for omegaconf 2.0 (hydra 1.0) that read optional keys as None stop
  there under omegaconf 2.1+ (sasv-challenge/SASVC2022_Baseline#4); a config that simply lacks a key the code needs
  prints the same: likely.

`change(facts)` says which of them a line is; `decisive(facts, ctx)` whether the log makes it certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Pattern

FAMILY = "library releases that disagree with the code"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)

YAML_LOADER = "() missing 1 required positional argument: 'Loader'"
TENSORBOARD = "TensorBoard logging requires TensorBoard "
SPACY_SHORTCUT = "It looks like you're trying to load a model from a shortcut"
TOSTRING_RGB = "object has no attribute 'tostring_rgb'"
OLD_LABELS = ("masked_lm_labels", "lm_labels")
SKLEARN_SHIM = "The 'sklearn' PyPI package is deprecated, use 'scikit-learn'"
PYG_OLD_DATA = "The 'data' object was created by an older version of PyG"
RSL_MULTI_GPU = "() got an unexpected keyword argument 'multi_gpu_cfg'"
DIFFUSERS_GC = "object has no attribute 'enable_gradient_checkpointing'"
# the models diffusers 0.3.0 exports (src/diffusers/__init__.py), none with enable_gradient_checkpointing
DIFFUSERS_MODELS = ("UNet2DConditionModel", "UNet2DModel", "AutoencoderKL", "VQModel")
# RDKit's Mol methods a featurizer calls first on a parsed molecule (rdkit/Chem/rdchem's Mol): on None, RDKit's
# reader could not parse it
RDKIT_MOL_METHODS = (
    "GetAtoms",
    "GetNumAtoms",
    "GetNumHeavyAtoms",
    "GetBonds",
    "GetNumBonds",
    "GetAtomWithIdx",
    "GetBondWithIdx",
    "GetBondBetweenAtoms",
    "GetRingInfo",
    "GetConformer",
    "GetSubstructMatches",
    "HasSubstructMatch",
)
RDKIT_NONE = tuple(f"'NoneType' object has no attribute '{method}'" for method in RDKIT_MOL_METHODS)
OMEGACONF_MISSING = "ConfigAttributeError: Missing key"
LIGHTNING_HOOKS = (
    "configure_gradient_clipping",
    "optimizer_step",
    "optimizer_zero_grad",
    "on_before_optimizer_step",
    "backward",
    "training_step",
)
ANCHORS = (
    YAML_LOADER,
    TENSORBOARD,
    SPACY_SHORTCUT,
    TOSTRING_RGB,
    *(f"forward() got an unexpected keyword argument '{name}'" for name in OLD_LABELS),
    SKLEARN_SHIM,
    *(f"{hook}() missing 1 required positional argument: 'optimizer_idx'" for hook in LIGHTNING_HOOKS),
    PYG_OLD_DATA,
    RSL_MULTI_GPU,
    DIFFUSERS_GC,
    *RDKIT_NONE,
    OMEGACONF_MISSING,
)
# printed for another cause too: a file or folder named tensorboard that shadows the package; a runner of one's own
# passing multi_gpu_cfg; a fork's or a vendored copy's diffusers models; a molecule no RDKit reads; a config that
# lacks a key the code needs under any omegaconf
GENERIC = (TENSORBOARD, RSL_MULTI_GPU, DIFFUSERS_GC, *RDKIT_NONE, OMEGACONF_MISSING)
TEMPLATES = (
    "third_party:pyyaml-6-load-requires-loader",
    "third_party:torch-tensorboard-requires-1-15",
    "third_party:torch-tensorboard-requires-summary-writer",
    "third_party:spacy-3-model-shortcut-removed",
    "third_party:matplotlib-3-10-removed-tostring-rgb",
    "third_party:transformers-4-removed-lm-labels",
    "third_party:sklearn-pypi-package-deprecated",
    "third_party:lightning-2-hook-without-optimizer-idx",
    "third_party:pyg-data-created-by-older-version",
    "third_party:rsl-rl-runner-multi-gpu-cfg",
    "third_party:diffusers-0-3-model-without-gradient-checkpointing",
    "third_party:rdkit-reader-returned-none",
    "third_party:omegaconf-2-1-missing-key",
)
CHANGE = R(
    r"(?<![\w.])(?P<yaml_call>load|load_all|yaml\.load|yaml\.load_all)\(\) missing 1 required positional "
    r"argument: 'Loader'|"
    r"(?P<tb_refused>TensorBoard logging requires TensorBoard (?:version 1\.15 or above|with Python summary "
    r"writer installed))|"
    r"Can't find model '(?P<spacy_shortcut>\w{1,20})'\. It looks like you're trying to load a model from a "
    r"shortcut|"
    r"'(?P<mpl_canvas>FigureCanvas\w{0,40})' object has no attribute 'tostring_rgb'|"
    r"(?<![\w.])(?:\w{1,80}\.)?forward\(\) got an unexpected keyword argument '(?P<hf_old_label>"
    + "|".join(OLD_LABELS)
    + r")'|"
    r"(?P<sklearn_shim>The 'sklearn' PyPI package is deprecated, use 'scikit-learn')|"
    r"(?<![\w])(?:\w{1,80}\.)?(?P<pl_hook>"
    + "|".join(LIGHTNING_HOOKS)
    + r")\(\) missing 1 required positional "
    r"argument: 'optimizer_idx'|"
    r"(?P<pyg_old_data>The 'data' object was created by an older version of PyG)|"
    r"(?<![\w.])(?:(?P<rsl_algorithm>\w{1,80})\.)?__init__\(\) got an unexpected keyword argument "
    r"'(?P<rsl_multi_gpu>multi_gpu_cfg)'|"
    r"'(?P<diffusers_model>"
    + "|".join(DIFFUSERS_MODELS)
    + r")' object has no attribute 'enable_gradient_checkpointing'|"
    r"'NoneType' object has no attribute '(?P<rdkit_none>" + "|".join(RDKIT_MOL_METHODS) + r")'|"
    r"(?P<omegaconf_missing>ConfigAttributeError: Missing key)(?: (?P<omegaconf_key>[\w$-]{1,100}))?"
)
CONTEXT: tuple = ()

# spaCy 2's shortcuts and the packages spaCy 3 names for them (spacy/util.py OLD_MODEL_SHORTCUTS)
SPACY_PACKAGES = {
    "en": "en_core_web_sm",
    "de": "de_core_news_sm",
    "fr": "fr_core_news_sm",
    "es": "es_core_news_sm",
}


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Nothing in the log tells an old tensorboard from a shadowing one: the generic line stays likely."""
    return False


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for the release change among ``facts`` (the named groups of `CHANGE`), else None."""
    if facts.get("yaml_call"):
        return (
            "yaml.load() was called without a Loader, which PyYAML 6.0 requires (5.1-5.4 only warned): the "
            "code was written for PyYAML 5 and the installed PyYAML is 6 or newer",
            "Pass the loader where the code reads its config: yaml.load(f, Loader=yaml.SafeLoader) (or "
            "yaml.safe_load(f); yaml.FullLoader for the old default), or install the PyYAML the code was written "
            "for: pip install 'pyyaml<6' (5.4.1).",
        )
    if facts.get("tb_refused"):
        return (
            "torch.utils.tensorboard refused the tensorboard it imported: the tensorboard installed is older than "
            "1.15 (or has no version), or the name tensorboard is not the package (a tensorboard.py or a "
            "tensorboard folder beside the script shadows it)",
            "Install a current tensorboard (1.15 or newer) in the job's environment (pip install -U tensorboard; python -c "
            "'import tensorboard; print(tensorboard.__file__, tensorboard.__version__)' shows which one is "
            "imported). If that prints a path in your project, rename the file or folder called tensorboard. "
            "Or log with tensorboardX (from tensorboardX import SummaryWriter).",
        )
    if facts.get("spacy_shortcut"):
        name = facts["spacy_shortcut"]
        package = SPACY_PACKAGES.get(name, f"{name}_core_web_sm")
        return (
            f"spaCy 3 refused the model shortcut '{name}' that the code loads: the code was written for spaCy 2, "
            "whose shortcuts spaCy 3.0 removed",
            f"Load the model by its package name: spacy.load('{package}') after python -m spacy download "
            f"{package}; with torchtext's tokenizer pass it too (Field(tokenize='spacy', "
            f"tokenizer_language='{package}'), get_tokenizer('spacy', language='{package}')). Or install the "
            "spaCy the code was written for: pip install 'spacy<3'.",
        )
    if facts.get("mpl_canvas"):
        return (
            f"the code calls {facts['mpl_canvas']}.tostring_rgb(), which Matplotlib 3.8 deprecated and 3.10 "
            "removed: the installed Matplotlib is newer than the code (a plot drawn into the training logs)",
            "Read the canvas with buffer_rgba: data = np.asarray(fig.canvas.buffer_rgba())[..., :3] (after "
            "fig.canvas.draw(); it is already height x width x 4, no reshape), or install a Matplotlib the code "
            "was written for: pip install 'matplotlib<3.10'.",
        )
    if facts.get("hf_old_label"):
        name = facts["hf_old_label"]
        return (
            f"the code passes {name}= to a transformers model, an argument transformers 3 deprecated and 4.0 "
            "removed (renamed labels): the installed transformers is newer than the code",
            f"Pass labels= instead of {name}= in the training code's model call (model(input_ids, labels=...)), "
            "or install the transformers the code was written for: pip install 'transformers<4' (3.5.1, or the "
            "version its requirements pin).",
        )
    if facts.get("pl_hook"):
        hook = facts["pl_hook"]
        return (
            f"the LightningModule's {hook} override still takes optimizer_idx, which Lightning 2.0 no longer "
            "passes (it dropped several optimizers under automatic optimization): the code was written for "
            "Lightning 1.x and the installed one is 2.x",
            f"Remove optimizer_idx from {hook}'s signature (and from its body; with several optimizers switch to "
            "manual optimization: self.automatic_optimization = False), or install the Lightning the code was "
            "written for: pip install 'pytorch-lightning<2.0.0'.",
        )
    if facts.get("pyg_old_data"):
        return (
            "PyTorch Geometric 2.x was given a Data object pickled by PyG 1.x (the storage of Data changed in "
            "2.0): a dataset processed, or data saved, under the older release",
            "Delete the dataset's processed/ folder (under its root, e.g. <root>/<name>/processed) so PyG 2 "
            "re-processes it from raw/. If the old objects are not re-made from raw (a repository's pickled graphs "
            "in raw/, a saved .pt of Data objects), convert them once under PyG 2 (Data.from_dict(old.__dict__) "
            "for each object, then save again), or install the PyG 1.x the data was made with (pip install "
            "torch-geometric==1.7.2 with a torch of its time).",
        )
    if facts.get("rsl_multi_gpu"):
        algorithm = facts.get("rsl_algorithm") or "the algorithm class"
        return (
            f"rsl_rl's runner passed multi_gpu_cfg to {algorithm}, whose __init__ does not take it: the installed "
            "rsl_rl (a release with multi-GPU training) is newer than the algorithm code it builds (a project's own "
            "PPO, or an older rsl_rl's)",
            "Install the rsl_rl the training code was written for (its README or requirements pin it, e.g. pip "
            "install 'rsl-rl-lib==2.0.1' or the commit it names; IsaacLab releases name theirs), or add "
            "multi_gpu_cfg: dict | None = None to the algorithm's __init__ (and pass it on to its base class) to "
            "follow the newer runner.",
        )
    if facts.get("diffusers_model"):
        model = facts["diffusers_model"]
        return (
            f"the code calls {model}.enable_gradient_checkpointing(), which diffusers' models have from 0.4.0 "
            "on: the installed diffusers is older than the training script (0.3.x)",
            "Install the diffusers the script was written for: pip install -U 'diffusers>=0.4.0' (or the version "
            "its requirements pin; an extension or repository that pins an older one needs its requirements "
            "updated or an older script), then run the training again; or turn gradient checkpointing off in the "
            "script's options.",
        )
    if facts.get("rdkit_none"):
        return (
            f"RDKit could not read a molecule and returned None, which the code then asked for "
            f"{facts['rdkit_none']}(): most often a dataset's molecules (SMILES) written for a newer RDKit than "
            "the one installed, or a molecule no RDKit reads (RDKit logs 'SMILES Parse Error' or 'Explicit "
            "valence ... is greater than permitted' just before)",
            "Install the RDKit the dataset or project names (pip install -U rdkit; a dataset's loader such as "
            "ogb's PCQM4M needs a recent one) and build the processed dataset again. If the same molecule still "
            "fails, it is the data: find it (print the SMILES where Chem.MolFromSmiles returns None) and skip or "
            "fix it (if mol is None: continue), or read it with sanitize=False.",
        )
    if facts.get("omegaconf_missing"):
        key = facts.get("omegaconf_key", "")
        named, value = (f"the config key '{key}'", key) if key else ("a config key", "the key")
        return (
            f"the code reads {named}, which the config does not have: omegaconf 2.0 returned None "
            "for a missing key and 2.1 and later raise, so code and configs written for omegaconf 2.0 (hydra 1.0) "
            "stop here under a newer omegaconf; or the config lacks a key the code needs",
            f"Install the omegaconf the project was written for (pip install 'omegaconf==2.0.6', with hydra-core "
            f"1.0.x where it uses hydra), or keep the newer one and give the key a value in the config ({value}: "
            f"null where None is meant), or read it with a default in the code (cfg.get('{value}')). If the project "
            "needs the key set, compare the config with the one the project ships.",
        )
    if facts.get("sklearn_shim"):
        return (
            "pip was asked to install the package named sklearn, a placeholder on PyPI that refuses to install: "
            "a requirements file or setup.py names sklearn where scikit-learn is meant",
            "Write scikit-learn instead of sklearn in the project's requirements.txt / setup.py / setup.cfg / "
            "pyproject.toml (pip install scikit-learn; the import name stays sklearn). If a dependency asks for it "
            "(pip's output names the package being installed), upgrade that package or report it to it; only as a "
            "last resort set SKLEARN_ALLOW_DEPRECATED_SKLEARN_PACKAGE_INSTALL=True.",
        )
    return None
