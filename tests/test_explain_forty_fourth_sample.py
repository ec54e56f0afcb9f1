"""The forty-fourth sample's train misses: each reading on its line as the source prints it, filled in as the
thread posted it, and a near-miss that must not read as it (tests/fixtures/corpus/SAMPLING.md, files 2017-2033)."""

from __future__ import annotations

import io

from torchdoctor.explain.diagnose import explain


def lead(text: str):
    """The first finding for ``text`` read as a pasted log."""
    return explain(["-"], stdin=io.BytesIO(text.encode()))[0]


# torchvision/datasets/folder.py find_classes, under ImageFolder (hexiang10/facial-expression-recognition#3)
NO_CLASS_FOLDER = (
    "Traceback (most recent call last):\n"
    '  File "F:\\deeplearning\\facial-expression-recognition\\model_ResNet.py", line 32, in <module>\n'
    "    data_vaild = torchvision.datasets.ImageFolder(root=path_vaild,transform=transforms_vaild)\n"
    '  File "F:\\anaconda\\envs\\DL\\lib\\site-packages\\torchvision\\datasets\\folder.py", line 43, in find_classes\n'
    '    raise FileNotFoundError(f"Couldn\'t find any class folder in {directory}.")\n'
    "FileNotFoundError: Couldn't find any class folder in face_images/vgg_verify_set.\n"
)


def test_imagefolder_without_class_folders_is_a_data_path_certain_and_names_the_root():
    found = lead(NO_CLASS_FOLDER)
    assert found.id == "log.data_path_missing" and found.details["confidence"] == "certain"
    assert "'face_images/vgg_verify_set'" in found.summary
    assert "one level up" in found.fix and "face_images/vgg_verify_set/0/img_0.png" in found.fix


def test_the_raising_source_line_alone_is_not_a_root():
    # the traceback's code line, without the error below it, names no folder
    found = lead('    raise FileNotFoundError(f"Couldn\'t find any class folder in {directory}.")\n')
    assert found.id != "log.data_path_missing"


def test_a_missing_info_file_names_the_data_preparation_that_writes_it():
    # OpenPCDet's gt_sampling reading the database info (open-mmlab/OpenPCDet#244)
    found = lead(
        "FileNotFoundError: [Errno 2] No such file or directory: "
        "'/home/zehao/PV-RCNN/OpenPCDet/data/kitti/kitti_dbinfos_train.pkl'\n"
    )
    assert found.id == "log.data_path_missing" and found.details["confidence"] == "likely"
    # the reading itself, before the other kinds the same line was seen under ("; or ..."), says no checkpoint
    reading = found.summary.split("; or ")[0]
    assert "info file" in reading and "checkpoint" not in reading, found.summary
    assert "create_kitti_infos" in found.fix and "tools/create_data.py kitti" in found.fix


def test_another_missing_file_gets_no_data_preparation_step():
    found = lead(
        "FileNotFoundError: [Errno 2] No such file or directory: '/data/kitti/training/velodyne/000001.bin'\n"
    )
    assert found.id == "log.data_path_missing" and "create_kitti_infos" not in found.fix


# pkg-config's refusal inside ffcv's setup.py (libffcv/ffcv#133)
PKG_CONFIG = (
    "Package opencv4 was not found in the pkg-config search path.\n"
    "Perhaps you should add the directory containing `opencv4.pc'\n"
    "to the PKG_CONFIG_PATH environment variable\n"
    "No package 'opencv4' found\n"
)


def test_pkg_config_without_the_pc_file_is_a_missing_system_library():
    found = lead(PKG_CONFIG)
    assert found.id == "log.system_library_missing" and found.details["confidence"] == "certain"
    assert "opencv4.pc" in found.summary
    assert "libopencv-dev" in found.fix and "PKG_CONFIG_PATH" in found.fix


def test_pkg_config_itself_missing_is_not_that():
    found = lead("The pkg-config command could not be found.\n")
    assert found.id != "log.system_library_missing"


# GDAL reading a GeoTIFF through libtiff (LiZhuoHong/Paraformer#1)
RASTER = (
    "ERROR 1: TIFFFillStrip:Read error at scanline 4294967295; got 0 bytes, expected 25709\n"
    "ERROR 1: TIFFReadEncodedStrip() failed.\n"
    "ERROR 1: ./dataset/Chesapeake_NewYork_dataset/HR_image/m_4207538_nw_18_1_naip-new.tif, band 1: IReadBlock "
    "failed at X offset 0, Y offset 5460: TIFFReadEncodedStrip() failed.\n"
)


def test_a_raster_gdal_cannot_read_to_its_end_is_likely_a_damaged_file_named():
    found = lead(RASTER)
    assert found.id == "log.bad_training_data" and found.details["confidence"] == "likely"
    assert "'./dataset/Chesapeake_NewYork_dataset/HR_image/m_4207538_nw_18_1_naip-new.tif'" in found.summary
    assert "gdalinfo -checksum" in found.fix and "worker_init_fn" in found.fix


def test_a_decode_error_without_the_short_read_is_not_read_as_it():
    found = lead("ERROR 1: TIFFReadEncodedStrip() failed.\n")
    assert found.id != "log.bad_training_data"


# torch_geometric/data/data.py Data.__getattr__ (ralphabb/GNN-RNI#5)
PYG_OLD = (
    "RuntimeError: The 'data' object was created by an older version of PyG. If this error occurred while loading "
    "an already existing dataset, remove the 'processed/' directory in the dataset's root folder and try again.\n"
)


def test_data_pickled_by_pyg_1_is_a_dependency_version_certain():
    found = lead(PYG_OLD)
    assert found.id == "log.dependency_version" and found.details["confidence"] == "certain"
    assert "processed/" in found.fix and "PyG 1.x" in found.fix and "Data.from_dict" in found.fix


def test_pygs_pre_transform_warning_is_not_that():
    found = lead(
        "UserWarning: The `pre_transform` argument differs from the one used in the pre-processed version of "
        "this dataset. If you want to make use of another pre-processing technique, make sure to delete "
        "'data/processed' first\n"
    )
    assert found.id != "log.dependency_version"
