"""The table of members each release of a library's classes has (catalog/api_members.tsv, written by
benchmarks/api_members.py from the released wheels) and what `explain` says on CPython's "'X' object has no
attribute 'y'" and "type object 'X' has no attribute 'y'": the release that added or removed it, the pin or the
upgrade; and what it does not say (a member every release has, a class several packages define that the log does
not tie to one, a class of the project's own, an installed release that has it). Nothing is downloaded here: the
generator is tried on wheels made in the test."""

from __future__ import annotations

import sys
from pathlib import Path

from explaining import explained, leads_with, made_wheel

from torchdoctor.explain import printed_versions
from torchdoctor.explain.kinds import api_members

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import api_members as generator  # noqa: E402

SITE = "/opt/conda/lib/python3.11/site-packages"


def patched_attention(member: str, above: str = "") -> str:
    """A run whose patched LlamaAttention.forward (the project's llama_patch.py) reads ``member``, under
    transformers' decoder layer: torch's nn.Module.__getattr__ raises (module.py, the words CPython prints)."""
    return (
        above + "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 88, in <module>\n'
        "    trainer.train()\n"
        f'  File "{SITE}/transformers/models/llama/modeling_llama.py", line 640, in forward\n'
        "    hidden_states, self_attn_weights, present_key_value = self.self_attn(\n"
        '  File "/home/ana/project/llama_patch.py", line 41, in forward\n'
        f"    cos, sin = self.{member}(value_states, position_ids)\n"
        f'  File "{SITE}/torch/nn/modules/module.py", line 1931, in __getattr__\n'
        "    raise AttributeError(\n"
        f"AttributeError: 'LlamaAttention' object has no attribute '{member}'"
    )


# --- what the table names --------------------------------------------------------------------------------------


def test_a_member_transformers_removed_names_the_release_and_the_pin_likely():
    (row,) = api_members.rows("transformers", "LlamaAttention", "rotary_emb")
    assert (row.last[:4], row.removed[:4]) == ("4.47", "4.48")
    found = leads_with(
        patched_attention("rotary_emb"),
        "dependency_version",
        "likely",
        ["LlamaAttention.rotary_emb was removed in transformers 4.48", "transformers<4.48", "project's own"],
    )
    assert "llama_patch.py:41" in found.fix


def test_the_installed_release_the_log_states_without_the_member_makes_it_certain():
    found = leads_with(
        patched_attention("num_heads", above="[pip3] transformers==4.49.0\n[pip3] torch==2.5.1\n"),
        "dependency_version",
        "certain",
        ["the installed transformers 4.49.0 is newer", "transformers<4.48"],
    )
    assert "project's own" not in found.summary


def test_the_installed_release_with_the_member_is_not_blamed():
    found = explained(patched_attention("rotary_emb", above="- `transformers` version: 4.46.3\n") + "\n")
    assert "removed in transformers" not in found.summary


def test_a_member_added_later_says_upgrade_and_reads_a_class_attribute_too():
    # torch/_C/__init__.pyi: Tensor.untyped_storage from 2.0; CPython's type_getattro line for the class itself
    found = leads_with(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 12, in <module>\n'
        "    size = torch.Tensor.untyped_storage(x).nbytes()\n"
        "AttributeError: type object 'Tensor' has no attribute 'untyped_storage'",
        "dependency_version",
        "likely",
        ["Tensor.untyped_storage came in torch 2.0", "torch>=2.0"],
    )
    assert found.details["kind"] == "dependency_version"


def test_installed_versions_as_logs_state_them():
    facts = printed_versions.printed(
        "[pip3] transformers==4.49.0\n- `accelerate` version: 0.21.0\nPyTorch version: 2.1.0+cu121\n"
        "pytorch-lightning         1.9.5\n"
    )
    assert facts["transformers"] == "4.49.0"
    assert facts["accelerate"] == "0.21.0"
    assert facts["torch"] == "2.1.0+cu121"
    assert facts["pytorch_lightning"] == "1.9.5"


# --- near-misses: what the table does not decide -------------------------------------------------------------------


def test_a_member_every_release_has_is_the_scripts_own_mistake():
    # LlamaAttention.q_proj is in every release with the class: no row, nothing said from the table
    assert api_members.rows("transformers", "LlamaAttention", "q_proj") == []
    found = explained(patched_attention("q_proj") + "\n")
    assert found.id != "log.dependency_version", found.summary


def test_a_class_several_packages_define_needs_the_log_to_say_which():
    # Trainer is transformers', Lightning's: a line with nothing else in the log names neither
    line = "AttributeError: 'Trainer' object has no attribute 'fsdp'\n"
    assert api_members.load().namesakes["Trainer"] >= {"transformers", "pytorch_lightning"}
    assert explained(line).id != "log.dependency_version"
    # a Lightning run (its frames): Lightning's Trainer, whose accelerator_connector went in 1.6
    lightning_run = (
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 30, in <module>\n'
        "    trainer.fit(model)\n"
        f'  File "{SITE}/pytorch_lightning/trainer/trainer.py", line 740, in fit\n'
        "    self._call_and_handle_interrupt(\n"
        '  File "/home/ana/project/callbacks.py", line 18, in on_train_start\n'
        "    if trainer.accelerator_connector.is_distributed:\n"
        "AttributeError: 'Trainer' object has no attribute 'accelerator_connector'"
    )
    leads_with(
        lightning_run,
        "dependency_version",
        "likely",
        ["Trainer.accelerator_connector was removed in pytorch_lightning 1.6", "pytorch_lightning<1.6"],
    )
    # the same words from a log that runs both transformers and Lightning, no frame of either: not decided
    both = "[pip3] transformers==4.40.0\n[pip3] pytorch-lightning==1.9.5\n" + line
    assert explained(both).id != "log.dependency_version"


def test_a_class_of_the_projects_own_is_left_alone():
    found = explained(
        "Traceback (most recent call last):\n"
        '  File "/home/ana/project/train.py", line 52, in <module>\n'
        "    out = model.device2\n"
        "AttributeError: 'GCN' object has no attribute 'device2'\n"
    )
    assert found.id != "log.dependency_version", found.summary


def test_a_known_class_name_alone_with_no_package_in_the_log_says_nothing():
    # LlamaAttention is only transformers', but nothing in the log names transformers: a class of that name in the
    # project's own code prints the same line
    found = explained("AttributeError: 'LlamaAttention' object has no attribute 'rotary_emb'\n")
    assert found.id != "log.dependency_version", found.summary


# --- the generator, on wheels made here --------------------------------------------------------------------------


def test_a_class_members_are_its_methods_properties_fields_and_what_its_methods_assign_to_self():
    tree = generator.ast.parse(
        "class Engine(Base):\n"
        "    steps: int = 0\n"
        "    name = 'engine'\n"
        "    _private = 1\n"
        "    def __init__(self, model):\n"
        "        self.model = model\n"
        "        self._hidden = 1\n"
        "        if model is not None:\n"
        "            self.optimizer = None\n"
        "    @property\n"
        "    def device(self):\n"
        "        return 'cpu'\n"
        "    async def run(me):\n"
        "        me.running = True\n"
        "    class Inner:\n"
        "        pass\n"
    )
    (node,) = tree.body
    assert generator.own_members(node) == {
        "steps",
        "name",
        "model",
        "optimizer",
        "device",
        "run",
        "running",
        "Inner",
    }


def test_bases_are_followed_inside_the_package_through_its_imports_not_into_another_package(tmp_path):
    wheel = made_wheel(
        tmp_path,
        "pkg-1.0.0-py3-none-any.whl",
        {
            "pkg/__init__.py": "from .engine import Engine\n",
            "pkg/engine.py": (
                "import torch.nn as nn\n"
                "from .base import Base\n"
                "class Engine(Base, nn.Module):\n"
                "    def step(self):\n"
                "        self.global_steps = 1\n"
            ),
            "pkg/base.py": "class Base:\n    def save_checkpoint(self, path):\n        pass\n",
            "pkg/tests/test_engine.py": "class Engine:\n    pass\n",
        },
    )
    classes = generator.read_release("pkg", wheel)
    # nn.Module is torch's: not read here, nothing added; the copy under tests/ is not the library's
    assert classes.members("Engine") == {"step", "global_steps", "save_checkpoint"}


def test_a_class_two_modules_define_is_undecided_but_a_subclass_importing_one_is_not(tmp_path):
    wheel = made_wheel(
        tmp_path,
        "pkg-1.0.0-py3-none-any.whl",
        {
            "pkg/a.py": "class Config:\n    def to_dict(self):\n        pass\n",
            "pkg/b.py": "class Config:\n    def to_json(self):\n        pass\n",
            "pkg/c.py": "from .a import Config\nclass LoraConfig(Config):\n    r = 8\n",
        },
    )
    classes = generator.read_release("pkg", wheel)
    assert classes.members("Config") is None
    assert classes.members("LoraConfig") == {"r", "to_dict"}


def test_only_members_some_releases_have_and_others_not_are_rows():
    releases = [
        ("1.0.0", {"Engine": {"step", "save"}, "Other": {"run"}}, {}, set(), {}),
        ("1.1.0", {"Engine": {"step", "save", "unwrap"}, "Other": {"run"}}, {}, set(), {}),
        ("1.2.0", {"Engine": {"step", "unwrap"}}, {}, set(), {}),
    ]
    assert generator.changes("pkg", releases) == [
        ("pkg", "Engine", "save", "", "1.1.0", "1.2.0"),
        ("pkg", "Engine", "unwrap", "1.1.0", "", ""),
    ]


def test_a_change_across_an_undecided_release_names_no_release():
    releases = [
        ("1.0.0", {"Engine": {"step"}}, {}, set(), {}),
        ("1.1.0", {"Engine": None}, {}, set(), {}),  # defined twice there: which one is not known
        ("1.2.0", {"Engine": {"step", "unwrap"}}, {}, set(), {}),
    ]
    assert generator.changes("pkg", releases) == []


def test_a_member_gone_where_the_class_defines_getattr_is_not_named_removed():
    # transformers 4.47 serves the special tokens (bos_token, ...) from SpecialTokensMixin.__getattr__
    releases = [
        ("4.46.3", {"Tokenizer": {"bos_token", "encode"}}, {}, set(), {}),
        ("4.47.1", {"Tokenizer": {"encode", "extra_special_tokens"}}, {}, {"Tokenizer"}, {}),
    ]
    assert generator.changes("transformers", releases) == [
        ("transformers", "Tokenizer", "extra_special_tokens", "4.47.1", "", "")
    ]


def test_a_subclass_rows_its_base_gives_are_left_out_and_read_back_through_its_bases():
    engine = {"1.0.0": {"step"}, "1.1.0": {"step", "unwrap"}, "1.2.0": {"step", "unwrap"}}
    releases = [
        (
            v,
            {"Engine": m, "Pipe": m, "Young": m if v != "1.0.0" else None},
            {"Pipe": ["Engine"], "Engine": []},
            set(),
            {},
        )
        for v, m in engine.items()
    ]
    for _, _, bases, _, _ in releases[1:]:
        bases["Young"] = ["Engine"]
    versions = list(engine)
    rows = generator.changes("pkg", releases)
    assert ("pkg", "Pipe", "unwrap", "1.1.0", "", "") in rows
    kept, lines = generator.shrink("pkg", versions, rows, releases)
    # Pipe's row is Engine's: left out, its line says where to read it; Young (from 1.1.0) never lacked it
    assert kept == [("pkg", "Engine", "unwrap", "1.1.0", "", "")]
    assert lines == ["#inherits\tpkg\tPipe\t1.0.0\t1.2.0\tEngine"]
    table = api_members.Table({"pkg": (versions, [])}, {}, {("pkg", "Pipe"): ("1.0.0", "1.2.0", ("Engine",))})
    own = {("pkg", "Engine", "unwrap"): api_members.Member("pkg", "Engine", "unwrap", "1.1.0", "", "", "")}
    assert api_members.member_row(table, own, "pkg", "Pipe", "unwrap").added == "1.1.0"
    assert api_members.member_row(table, own, "pkg", "Pipe", "step") is None


# --- a base from another package the build reads: its members in any release read, not the subclass's change ---


def _trainers(tmp_path: Path) -> tuple[generator.Outside, list[generator.Release]]:
    """Two releases of "hub" (a Trainer that gains log in 2.0) and three of "rl", whose PPOTrainer subclasses
    hub's Trainer as TRL's trainers subclass transformers': (what the build knows of hub, rl's releases read)."""
    hub: generator.Defined = {}
    for version, extra in (("1.0.0", ""), ("2.0.0", "    def log(self, logs):\n        pass\n")):
        trainer = (
            "class Trainer:\n    def __init__(self, args):\n        self.args = args\n"
            "    def compute_loss(self, model, inputs):\n        pass\n" + extra
        )
        wheel = made_wheel(
            tmp_path,
            f"hub-{version}-py3-none-any.whl",
            {"hub/__init__.py": "from .trainer import Trainer\n", "hub/trainer.py": trainer},
        )
        generator.add_defined(generator.read_release("hub", wheel), hub)
    bodies = {
        "0.1.0": "    pass\n",
        # overrides hub's compute_loss and log (not rl's change: hub gives them) and adds beta (rl's own)
        "0.2.0": (
            "    def __init__(self, args, beta):\n        super().__init__(args)\n        self.beta = beta\n"
            "    def compute_loss(self, model, inputs):\n        pass\n    def log(self, logs):\n        pass\n"
        ),
        "0.3.0": "    def step(self):\n        pass\n",  # beta gone, the overrides too
    }
    releases = []
    for version, body in bodies.items():
        wheel = made_wheel(
            tmp_path,
            f"rl-{version}-py3-none-any.whl",
            {"rl/ppo.py": "from hub import Trainer\nclass PPOTrainer(Trainer):\n" + body},
        )
        releases.append((version, *generator.public(generator.read_release("rl", wheel))))
    return generator.Outside({"hub": hub}), releases


def test_a_member_the_other_packages_base_gives_is_not_named_added_or_removed(tmp_path):
    outside, releases = _trainers(tmp_path)
    assert releases[0][4] == {"PPOTrainer": frozenset({"hub.Trainer"})}
    # hub's Trainer has args, compute_loss and (in one release of hub at least) log: rl overriding them is no
    # release of rl adding or removing them
    assert outside.members("hub.Trainer") == {"args", "compute_loss", "log"}
    rows = generator.changes("rl", releases, outside)
    assert not {"compute_loss", "log", "args"} & {member for _, _, member, *_ in rows}


def test_a_member_of_the_packages_own_beside_a_read_base_is_still_a_row(tmp_path):
    outside, releases = _trainers(tmp_path)
    # beta: no release of hub's Trainer has it, so rl 0.2.0 added it and 0.3.0 removed it
    assert generator.changes("rl", releases, outside) == [
        ("rl", "PPOTrainer", "beta", "0.2.0", "0.2.0", "0.3.0"),
        ("rl", "PPOTrainer", "step", "0.3.0", "", ""),
    ]
    # without hub read, its Trainer may give anything: no change beside it is named
    assert generator.changes("rl", releases) == []


def test_a_base_whose_package_leaves_it_undecided_gives_anything(tmp_path):
    outside, releases = _trainers(tmp_path)
    outside.read["hub"][("Trainer", "hub.trainer")] = (None, frozenset())
    outside.known.clear()
    assert outside.members("hub.Trainer") is None
    assert generator.changes("rl", releases, outside) == []


def test_a_build_of_one_package_reads_the_packages_its_classes_subclass_beyond_the_known_bases():
    # --build --only trl: TRL's trainers subclass transformers' Trainer, which the build then reads for its
    # members; torch's nn.Module is known already, a package the build never reads cannot be read
    outside = generator.Outside(
        {
            "trl": {
                ("SFTTrainer", "trl.trainer.sft_trainer"): (
                    {"dataset_text_field"},
                    frozenset({"transformers.Trainer"}),
                ),
                ("ValueHead", "trl.models"): (
                    {"summary"},
                    frozenset({"torch.nn.Module", "lightning_fabric.Mixin"}),
                ),
            }
        }
    )
    assert outside.needs() == {"transformers"}
