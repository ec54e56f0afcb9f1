"""Training code of research repositories and libraries with a bug a later commit fixed, read from the line it prints.

- amirgholami/adahessian's ``instruction/adahessian.py`` (the optimizer its README offers as a drop-in, from
  9c0d645 of 2020-08-19): ``Adahessian.step`` read ``gradsH[i]``, a name it never defined, until 5e2683f
  (2021-04-08) made it ``grads[i]``, and then ``hut_trace[i]`` for ``hut_traces`` until d411f4f the same day
  (amirgholami/adahessian#17). CPython's NameError "name 'gradsH' is not defined" ('hut_trace') is that file;
  other code using the names (PyHessian's ``gradsH``, a copy of one's own) prints the same: likely.
- jordan-g/PyTorch-Feedback-Alignment-Layers' ``fa_layers.py``: ``LinearFA`` registers ``linear_fa_backward_hook``
  with the old ``register_backward_hook``, whose ``grad_input`` is the last operation's (addmm with a bias, mm
  without), and the hook replaces ``grad_input[1]`` with the feedback-alignment gradient of the input: with
  ``bias=False`` that slot is the weight's gradient, so torch's ``python_hook.cpp`` refuses the result ("hook
  'linear_fa_backward_hook' has changed the size of value"). The owner fixed it on 2021-03-14
  (PyTorch-Feedback-Alignment-Layers#1). A hook of one's own with that name prints the same: likely.
  ``conv2d_fa_backward_hook`` is left to the hook reading (custom_autograd.py): #2 reports it after the fix.
- LiyuanLucasLiu/RAdam's ``language-model/model_word_ada/radam.py``, the copy its language-model experiments use:
  ``RAdam.step`` computes the rectification ``ratio = math.sqrt((1 - beta2_t) * (N_sma - 4) / (N_sma_max - 4) *
  (N_sma - 2) / N_sma * N_sma_max / (N_sma_max - 2)) / beta1_t`` once per step from the first parameter's state,
  and math.sqrt of a negative value raises CPython's "math domain error" there (RAdam#30, Transformer-XL trained
  with it); the owner points to the repository's top-level ``radam.py`` (the ``radam`` package) as the fixed
  optimizer. Python prints that source line in the traceback (its last physical line, ``... / beta1_t``), which the
  top-level file does not have: likely (a copy of one's own prints the same).
- ultralytics' ``ultralytics/engine/trainer.py`` (8.3.225, the release ultralytics#22598 ran, and those before the fix): ``BaseTrainer._do_train`` set ``final_epoch``
  only inside ``if RANK in {-1, 0}:`` and then read it in ``if self.args.val or final_epoch or ...``; with
  ``val=False`` under DDP the other ranks read it unassigned after the first epoch: CPython's UnboundLocalError
  "local variable 'final_epoch' referenced before assignment" (3.11+: "cannot access local variable 'final_epoch'
  where it is not associated with a value"; ultralytics#22598), fixed by ultralytics#22607 (2025-11-07), which
  computes it on every rank. YOLOv5's train.py and code of one's own use the name too: likely.
"""

from __future__ import annotations

import re

from torchdoctor.explain.recognisers import Hit, first, on_ranks

FAMILY = "library releases that disagree with the code"

ADAHESSIAN_NAMES = ("gradsH", "hut_trace")
# the rectification line of the language-model copy as the traceback prints it: one physical line (the file today)
# or the last of the statement's lines (the copy RAdam#30 ran)
RADAM_RATIO_LINES = ("(N_sma_max - 2)) / beta1_t", "(N_sma_max - 2))) / beta1_t")
# CPython's UnboundLocalError for ultralytics' rank-0-only final_epoch, before and since Python 3.11
FINAL_EPOCH_UNBOUND = (
    "local variable 'final_epoch' referenced before assignment",
    "cannot access local variable 'final_epoch' where it is not associated with a value",
)
ANCHORS = (
    *(f"name '{name}' is not defined" for name in ADAHESSIAN_NAMES),
    "hook 'linear_fa_backward_hook' has changed the size of value",
    *RADAM_RATIO_LINES,
    *FINAL_EPOCH_UNBOUND,
)
FA_HOOK = re.compile(r"hook '(?P<fa_hook>linear_fa_backward_hook)' has changed the size of value")
REFUSED = re.compile(
    r"name '(?P<adahessian_name>" + "|".join(ADAHESSIAN_NAMES) + r")' is not defined|" + FA_HOOK.pattern + "|"
    r"(?P<radam_ratio>N_sma_max / \(N_sma_max - 2\)\)\)? / beta1_t)|"
    r"(?P<final_epoch>local variable 'final_epoch' (?:referenced before assignment|where it is not associated))"
)
TEMPLATES = (
    "third_party:adahessian-instruction-undefined-name",
    "third_party:fa-layers-linear-hook-without-bias",
    "third_party:radam-language-model-ratio-math-domain",
    "third_party:ultralytics-final-epoch-unbound",
)


def explain(hits: list[Hit]) -> tuple[str, str]:
    """(summary, fix) for the research code's bug among ``hits`` (the named groups of `REFUSED`)."""
    name = first(hits, "adahessian_name")
    if name:
        return (
            f"Python found no {name} in AdaHessian's step: instruction/adahessian.py of amirgholami/adahessian read "
            "gradsH (then hut_trace) without defining it, a bug its owner fixed on 2021-04-08"
            + on_ranks(hits),
            "Take the fixed file (git pull the adahessian repository, or copy instruction/adahessian.py again), or "
            "use image_classification/optim_adahessian.py from the same repository or the pytorch-optimizer "
            "package's Adahessian (torch_optimizer.Adahessian); keep loss.backward(create_graph=True) before "
            "optimizer.step().",
        )
    if first(hits, "final_epoch"):
        return (
            "final_epoch was read before it was set: ultralytics' trainer (8.3.225 and before its fix) computed it "
            "only on rank 0 and read it on every rank, so DDP training with val=False failed on the other ranks after the "
            "first epoch (ultralytics#22598); code of one's own with the name can print the same"
            + on_ranks(hits),
            "Upgrade ultralytics (pip install -U ultralytics): ultralytics#22607 (2025-11-07) sets final_epoch on "
            "every rank. Until then train with val=True, or on one GPU. In a script of your own, assign final_epoch "
            "on every rank before the code that reads it (outside any if RANK in {-1, 0} block).",
        )
    if first(hits, "radam_ratio"):
        return (
            "math.sqrt got a negative value in RAdam's rectification ratio: the copy of radam.py under RAdam's "
            "language-model/ (model_word_ada/radam.py) computes it this way, and its owner points to the "
            "repository's top-level radam.py as the fixed optimizer" + on_ranks(hits),
            "Use the top-level radam.py of LiyuanLucasLiu/RAdam (pip install of its radam package) instead of the "
            "language-model/model_word_ada copy, or torch.optim.RAdam (torch 1.10+), which handles the early steps "
            "without the square root of a negative; for sparse embedding gradients keep SparseAdam for those and "
            "RAdam for the dense parameters.",
        )
    return (
        "the feedback-alignment layers' linear_fa_backward_hook returned a gradient of another shape: on a LinearFA "
        "built with bias=False it puts the input's gradient where the old register_backward_hook has the weight's, "
        "a bug of PyTorch-Feedback-Alignment-Layers its owner fixed on 2021-03-14" + on_ranks(hits),
        "Update fa_layers.py to the repository's latest commit (git pull in your clone of "
        "jordan-g/PyTorch-Feedback-Alignment-Layers), or build the LinearFA layers with bias=True until then.",
    )
