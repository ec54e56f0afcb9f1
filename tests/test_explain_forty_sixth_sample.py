"""The forty-sixth sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2117-2136)."""

from __future__ import annotations

import pytest
from explaining import explained as lead
from explaining import leads_with, likely_with

# scipy/io/matlab/_mio.py mat_reader_factory, as scipy 1.x raises it through a dataset's loadmat call
V73 = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 41, in <module>\n'
    "    trSet = ngsimDataset('data/TrainSet.mat')\n"
    '  File "/content/utils.py", line 12, in __init__\n'
    "    self.D = scp.loadmat(mat_file)['traj']\n"
    '  File "/usr/local/lib/python3.10/dist-packages/scipy/io/matlab/_mio.py", line 80, in mat_reader_factory\n'
    "    raise NotImplementedError('Please use HDF reader for matlab v7.3 '\n"
    "NotImplementedError: Please use HDF reader for matlab v7.3 files, e.g. h5py\n"
)
# older scipy's line, as YuxiangZhang-BIT/IEEE_TGRS_LDGnet#2 quoted it
V73_OLD = "NotImplementedError: Please use HDF reader for matlab v7.3 files\n"


@pytest.mark.parametrize("log", [V73, V73_OLD], ids=["scipy_1x", "older"])
def test_a_matlab_v73_file_read_with_loadmat_is_certain_and_says_h5py(log):
    leads_with(log, "matlab_v73_file", "certain", ["h5py", "-v7.3"])


def test_another_not_implemented_error_is_not_a_matlab_file():
    assert (
        lead("NotImplementedError: Please use the HDF5 writer for this format\n").id != "log.matlab_v73_file"
    )


# dgl/heterograph.py _set_n_repr / _set_e_repr (DGL 0.5+), as phython96/GNAS-MP#1 posted the node case
DGL_NODE = (
    'dgl._ffi.base.DGLError: Cannot assign node feature "h" on device cuda:0 to a graph on device cpu. Call '
    "DGLGraph.to() to copy the graph to the same device.\n"
)
DGL_EDGE = (
    'dgl._ffi.base.DGLError: Cannot assign edge feature "w" on device cpu to a graph on device cuda:1. Call '
    "DGLGraph.to() to copy the graph to the same device.\n"
)


@pytest.mark.parametrize(
    ("log", "words"),
    [(DGL_NODE, ["'h'", "cuda:0", "on cpu", "g.to(device)"]), (DGL_EDGE, ["edge feature", "cuda:1"])],
    ids=["node", "edge"],
)
def test_a_feature_assigned_to_a_dgl_graph_on_another_device_is_a_certain_device_mismatch(log, words):
    leads_with(log, "device_mismatch", "certain", words)


def test_a_dgl_graph_feature_of_the_wrong_size_is_not_a_device_mismatch():
    found = lead(
        "dgl._ffi.base.DGLError: Expect number of features to match number of nodes (len(u)). Got 10 and 12 "
        "instead.\n"
    )
    assert found.id != "log.device_mismatch"


# CPython's import failure inside pickle.load, as claws-lab/INPAC#2 and WenjieDu/PyPOTS#613 posted it
PANDAS_NUMERIC = "ModuleNotFoundError: No module named 'pandas.core.indexes.numeric'\n"


def test_a_pandas_1x_pickle_under_pandas_2_is_a_dependency_version_that_names_pandas_2():
    found = leads_with(PANDAS_NUMERIC, "dependency_version", "likely", ["pandas<2", "pandas 2.0"])
    assert "broken_install" not in found.summary


def test_another_missing_pandas_module_is_not_read_as_the_2_0_removal():
    found = lead("ModuleNotFoundError: No module named 'pandas.core.indexes.base2'\n")
    assert "Int64Index" not in found.summary + found.fix


# torch/utils/data/_utils/collate.py default_collate meeting PyTorch Geometric's Data (Xi-yuanWang/GLASS#3)
PYG_COLLATE = (
    "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
    "<class 'torch_geometric.data.data.Data'>\n"
)
OWN_LOOP = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 40, in <module>\n'
    "    for batch in loader:\n"
    '  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 631, in __next__\n'
    "    data = self._next_data()\n"
    '  File "/usr/lib/python3.10/site-packages/torch/utils/data/_utils/collate.py", line 150, in default_collate\n'
    "    raise TypeError(default_collate_err_msg_format.format(elem_type))\n" + PYG_COLLATE
)


def test_pyg_data_in_torchs_default_collate_says_pygs_dataloader_and_names_a_librarys_loader():
    likely_with(PYG_COLLATE, "dataloader_options", "log.library_version_bug")
    leads_with(PYG_COLLATE, "dataloader_options", "likely", ["torch_geometric.loader import DataLoader"])


def test_pyg_data_in_default_collate_from_the_scripts_own_loop_is_certain():
    leads_with(OWN_LOOP, "dataloader_options", "certain", ["Batch.from_data_list"])


def test_a_pil_image_in_default_collate_keeps_its_own_fix():
    found = lead(
        "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found "
        "<class 'PIL.Image.Image'>\n"
    )
    assert (
        found.id == "log.dataloader_options"
        and "ToTensor" in found.fix
        and "torch_geometric" not in found.fix
    )
