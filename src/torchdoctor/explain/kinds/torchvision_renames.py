"""A torchvision dataset's attributes read by the names of another release: ``train_labels`` for ``targets``.

torchvision 0.2.1 and older kept a dataset's samples and labels under the split's name (``train_data``,
``train_labels``, ``test_data``, ``test_labels``); 0.2.2 named them ``data`` and ``targets`` in every split.
MNIST and its subclasses (FashionMNIST, KMNIST, EMNIST, QMNIST) kept the old names as properties that warn
(torchvision/datasets/mnist.py: "train_labels has been renamed targets", "test_labels has been renamed targets",
"train_data has been renamed data", "test_data has been renamed data": the catalog's torchvision:*-renamed-*
rows); CIFAR10 and CIFAR100 (torchvision/datasets/cifar.py) kept nothing, so code of the older releases stops
there with CPython's "'CIFAR10' object has no attribute 'train_labels'" (system:object-has-no-attribute). The
other way, ``targets`` or ``data`` missing on one of these classes, is the code of 0.2.2 and later run with an
older torchvision. A class of the project's own with the same name prints the same words: certain only where the
log also shows torchvision's own warning of the rename (the code is of the old names and torchvision is newer),
likely otherwise. versions.py's dependency_version reads these lines with its other releases' changes (`CHANGE`).
"""

from __future__ import annotations

import re

FAMILY = "library releases that disagree with the code"

# the classes 0.2.2 gave data/targets; only CIFAR's lost the old names without a warning property
_CIFAR = "CIFAR10|CIFAR100"
_MNIST = "MNIST|FashionMNIST|KMNIST|EMNIST|QMNIST"
RENAMED = {"train_labels": "targets", "test_labels": "targets", "train_data": "data", "test_data": "data"}
CHANGE = re.compile(
    rf"'(?P<tv_dataset>{_CIFAR})' object has no attribute '(?P<tv_old_name>(?:train|test)_(?:labels|data))'|"
    rf"'(?P<tv_dataset_old>{_CIFAR}|{_MNIST})' object has no attribute '(?P<tv_new_name>targets|data)'"
)
# CPython's line with these classes ("MNIST'" ends FashionMNIST, KMNIST, EMNIST and QMNIST too)
ANCHORS = (
    "'CIFAR10' object has no attribute '",
    "'CIFAR100' object has no attribute '",
    "MNIST' object has no attribute '",
)
GENERIC = ANCHORS
TEMPLATES = ("system:object-has-no-attribute",)
# torchvision's own warning of the rename (the catalog's torchvision:train-labels-renamed-targets and its three
# siblings), anywhere in the log: the installed torchvision is 0.2.2 or newer and the code reads the old names
WARNED = re.compile(r"(?P<tv_rename_warned>(?:train|test)_(?:labels|data) has been renamed (?:targets|data))")
CONTEXT: tuple[tuple[str, re.Pattern], ...] = (("has been renamed", WARNED),)


def decisive(facts: dict, ctx_facts: dict) -> bool:
    """Certain on an old name beside torchvision's own warning of the rename."""
    return bool(facts.get("tv_old_name")) and bool(ctx_facts.get("tv_rename_warned"))


def change(facts: dict) -> tuple[str, str] | None:
    """(summary, fix) for a torchvision dataset attribute asked by another release's name."""
    old = facts.get("tv_old_name")
    if old:
        dataset, new = facts["tv_dataset"], RENAMED[old]
        return (
            f"{dataset} has no {old}: torchvision 0.2.2 renamed it {new} (the code was written for torchvision "
            "0.2.1 or older, the installed one is newer)",
            f"Read {dataset}'s .{new} instead of .{old} (the same values; .{new} of every split), or pin the "
            "torchvision the code was written for: pip install 'torchvision<0.2.2' (with its torch).",
        )
    new = facts.get("tv_new_name")
    if not new:
        return None
    dataset = facts["tv_dataset_old"]
    olds = " / ".join(old for old, renamed in RENAMED.items() if renamed == new)
    return (
        f"{dataset} has no {new}: the code was written for torchvision 0.2.2 or newer, and the installed one is "
        f"older (it names them {olds})",
        f"Upgrade torchvision (pip install -U torchvision, with the torch it requires), or read {olds} in the "
        "code for the installed release.",
    )
