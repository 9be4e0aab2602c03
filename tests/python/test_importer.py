# importer.py's pure helpers: a task's name, which constants are sizes, and how sizes scale.
from types import SimpleNamespace

from ksmith_kb.importer import halve_together, is_importers_own, scaled, size_constants, slug, task_name


def test_slug_is_lower_case_words_joined_by_one_underscore():
    assert slug("Conv2d_ReLU__BiasAdd") == "conv2d_relu_biasadd"
    assert slug("  Matmul (with) Diagonal-Matrices ") == "matmul_with_diagonal_matrices"
    assert slug("x" * 60) == "x" * 40
    assert not slug("a" * 39 + "_b").endswith("_")  # cut at 40, no underscore left at the end


def test_task_name_carries_the_level_and_the_problem_number():
    assert task_name("/kb/level1/19_ReLU.py", 1) == ("kb_l1_019_relu", 19, "ReLU")
    assert task_name("level3/100_Mamba2ReturnY.py", 3) == ("kb_l3_100_mamba2returny", 100, "Mamba2ReturnY")
    assert task_name("/kb/custom/softmax.py", 0) == ("kb_l0_softmax", 0, "softmax")


def problem(**defaults):
    return SimpleNamespace(defaults=defaults)


def test_sizes_leave_out_hyperparameters_axes_and_non_positive_values():
    sizes = size_constants(problem(batch_size=16, dim=1, in_features=4096, kernel_size=3, stride=2, eps=1,
                                   dropout_p=0, k=8, offset=0, reduce_dim=2, num_classes=10, seq_len=512))
    assert sizes == ["batch_size", "in_features", "seq_len"]


def test_an_axis_named_dim_is_a_size_when_it_is_large():
    assert size_constants(problem(dim=16384)) == ["dim"]


def test_scaling_keeps_small_sizes_and_rounds_the_rest():
    defaults = problem(batch_size=16, features=4096, hidden=100, heads=3)
    assert scaled(defaults, ["batch_size", "features", "hidden"], 1 / 256) == {"batch_size": 16, "features": 16,
                                                                               "hidden": 1}
    assert scaled(defaults, ["features", "hidden"], 0.5) == {"features": 2048, "hidden": 50}


def test_halving_together_keeps_coupled_sizes_coupled_and_stops_at_one():
    constants = {"n": 6, "m": 6, "fixed": 100}
    assert halve_together(constants, ["n", "m"])
    assert constants == {"n": 3, "m": 3, "fixed": 100}
    assert halve_together(constants, ["n", "m"]) and constants["n"] == 1 == constants["m"]
    assert not halve_together(constants, ["n", "m"])
    assert constants == {"n": 1, "m": 1, "fixed": 100}


def test_the_imports_own_folder_and_what_lies_in_it_are_not_search_paths(tmp_path):
    work = tmp_path / "kernelbench-import-abc"
    (work / "python" / "ksmith_kb").mkdir(parents=True)
    assert is_importers_own(str(work), work=str(work))
    assert is_importers_own(str(work / "python"), work=str(work))  # the launcher's sys.path entry
    assert is_importers_own(str(work / "python" / "ksmith_kb"), work=str(work))
    assert not is_importers_own(str(tmp_path), work=str(work))
    assert not is_importers_own(str(tmp_path / "kernelbench-import-abcd"), work=str(work))  # a prefix is not inside
    assert not is_importers_own("/usr/lib/python3/dist-packages", work=str(work))
