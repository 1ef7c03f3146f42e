"""The errors left where minigrad still differs from PyTorch name the PyTorch idiom and the minigrad
equivalent (issue 18, requirement 7): each idiom from a teaching program that minigrad cannot run as
written raises at once, saying what to write instead, never a bare NumPy error."""
import numpy
import pytest

import minigrad
from minigrad import nn


def test_assigning_an_array_to_data():
    with pytest.raises(TypeError, match=r"value must be a Tensor \(as in PyTorch\).*minigrad\.tensor\(array\)"):
        nn.Linear(2, 2).weight.data = numpy.zeros((2, 2))


def test_numpy_of_a_tensor_that_requires_grad():
    w = minigrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"requires grad.*t\.detach\(\)\.numpy\(\).*t\.exp\(\) for np\.exp\(t\)"):
        numpy.exp(w)


def test_index_from_a_float_or_multi_element_tensor():
    with pytest.raises(TypeError, match=r"single element.*use int\(t\) or t\.long\(\)"):
        "abc"[minigrad.tensor(1.0)]


def test_float_result_into_an_integer_tensor():
    counts = minigrad.tensor([1, 2])
    with pytest.raises(RuntimeError, match=r"mul_: result type float.* can't be cast.*x\.float\(\)\.mul"):
        counts.mul_(0.5)


def test_in_place_shape_change_of_a_parameter():
    with pytest.raises(RuntimeError, match=r"unsqueeze_: a leaf tensor that requires grad.*x = x\.unsqueeze\(\.\.\.\)"):
        nn.Linear(2, 2).weight.unsqueeze_(0)


def test_tensor_arguments_where_minigrad_takes_numbers():
    with pytest.raises(NotImplementedError, match=r"mean \+ std \* minigrad\.randn_like\(mean\)"):
        minigrad.normal(minigrad.zeros(3), 1.0, (3,))
    with pytest.raises(NotImplementedError, match="seed with minigrad.manual_seed"):
        minigrad.zeros(3).normal_(generator=object())


def test_map_location_function(tmp_path):
    minigrad.save({"w": minigrad.ones(2)}, tmp_path / "c.npz")
    with pytest.raises(TypeError, match=r"map_location must be a device name such as 'cpu'"):
        minigrad.load(tmp_path / "c.npz", map_location=lambda storage, location: storage)
    assert minigrad.load(tmp_path / "c.npz", "cpu")["w"].device == "cpu"


def test_names_left_out_say_what_to_use():
    x = minigrad.ones(2, requires_grad=True)
    for reach, alternative in ((lambda: x.stride, r"strides"), (lambda: x.index_add_, "one_hot"),
                               (lambda: minigrad.meshgrid, "broadcast"),
                               (lambda: minigrad.utils.data.IterableDataset, "subclass Dataset")):
        with pytest.raises(AttributeError, match=f"is not in minigrad: .*{alternative}"):
            reach()
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'not_a_method'"):
        x.not_a_method


def test_any_missing_in_place_method_points_to_its_out_of_place_form():
    x = minigrad.ones(3)
    with pytest.raises(AttributeError, match=r"no in-place cumsum_: write x = x\.cumsum\(\.\.\.\).*x\.copy_\(x\.cumsum"):
        x.cumsum_(0)
    with pytest.raises(AttributeError, match=r"no in-place logsumexp_"):
        x.logsumexp_
