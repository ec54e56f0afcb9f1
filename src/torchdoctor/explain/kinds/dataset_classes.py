"""A map-style Dataset subclass without the method the DataLoader calls on it.

- ``torch/utils/data/dataset.py`` ``Dataset.__getitem__`` raises NotImplementedError "Subclasses of Dataset should
  implement __getitem__." (pytorch#100667, torch 2.1 on; a bare NotImplementedError before): the class the
  DataLoader indexes never defined ``__getitem__`` where Python looks for it, a misspelled name
  (``__getItem__``, ``__get_item__``, ``getitem``), a method indented inside ``__init__``, or a class meant to be
  iterated (``__iter__`` only) derived from Dataset rather than IterableDataset. Certain.
- ``Subset.__init__`` (pytorch#163184, in the 2.13 wheel read here) raises NotImplementedError "<class> overrides
  __getitem__ but not __getitems__": the DataLoader fetches a batch of a Subset through ``__getitems__``, which
  would bypass the subclass's own ``__getitem__``; earlier torch took the batch silently without it. Certain.
"""

from __future__ import annotations

from torchdoctor.explain.recognisers import Context, Hit, Pattern, Recogniser, first, on_ranks

FAMILY = "data loading"

R = Pattern  # compiled where a log first needs it (recognisers.Pattern)


def _methods(hits: list[Hit], ctx: Context) -> tuple[str, str]:
    subset = first(hits, "subset_class")
    if subset:
        return (
            f"{subset} subclasses torch's Subset and overrides __getitem__ but not __getitems__, which torch "
            "refuses: the DataLoader would fetch its batches without the override" + on_ranks(hits),
            f"Add to {subset}: def __getitems__(self, indices): return [self.__getitem__(i) for i in indices] (as "
            "the message shows), or wrap the dataset in a Dataset of your own that holds the indices instead of "
            "subclassing Subset.",
        )
    return (
        "the DataLoader indexed a Dataset subclass that defines no __getitem__ of its own: torch's Dataset "
        "refused (Subclasses of Dataset should implement __getitem__)" + on_ranks(hits),
        "Define def __getitem__(self, index) in the class the DataLoader is given, at class level (not indented "
        "inside __init__ or another method) and spelled exactly so (not __getItem__, __get_item__ or getitem), "
        "with __len__ beside it. A dataset that produces samples by iterating (it defines __iter__) must derive "
        "from torch.utils.data.IterableDataset instead of Dataset.",
    )


DATASET_METHODS_MISSING = Recogniser(
    kind="dataset_methods_missing",
    templates=(
        "torch:subclasses-of-dataset-should-implement-getitem",
        "torch:overrides-getitem-but-not-getitems-when",
    ),
    title="a Dataset subclass without the method the DataLoader calls",
    anchors=(
        "Subclasses of Dataset should implement __getitem__",
        " overrides __getitem__ but not __getitems__",
    ),
    match=R(
        r"Subclasses of Dataset should implement __getitem__|"
        r"(?P<subset_class>\w{1,100}) overrides __getitem__ but not __getitems__"
    ),
    describe=_methods,
)

RECOGNISERS = (DATASET_METHODS_MISSING,)
