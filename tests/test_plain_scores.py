"""Plain score files: read without pandas, exactly as load_scores reads them, or not at all."""

import json

import numpy as np
import pytest

from scalinglab.data.plain_scores import read_plain_references, read_plain_scores
from scalinglab.data.scores import load_references, load_scores
from scalinglab.stats.normalize import normalize

DER = {"Pong": [1.5, -2, 3.25], "Alien": [227.8, 1e3, 0], "Boxing": [7, 8.125, 1e-9]}
SPR = {"Pong": [4.0, 5.5], "Alien": [6, 7], "Boxing": [0.1, 0.2]}  # fewer runs: absent rows


def write_json(folder, name, data):
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def files(tmp_path):
    return [write_json(tmp_path, "DER", DER), write_json(tmp_path, "SPR", SPR)]


@pytest.fixture
def refs(tmp_path):
    path = tmp_path / "refs.csv"
    path.write_text(
        "task,random,reference\nAlien,227.8,7127.7\nPong,-20.7,14.6\nBoxing,0.1,12\nChess,0,1\n"
    )
    return path


def test_plain_json_reads_as_load_scores(files):
    plain = read_plain_scores(files)
    assert plain is not None
    labelled = load_scores(files)
    assert plain.algorithms == [str(a) for a in labelled.coords["algorithm"].values]
    assert plain.tasks == [str(t) for t in labelled.coords["task"].values]
    np.testing.assert_array_equal(plain.values, labelled.values)  # NaN below SPR's two runs
    assert plain.values.dtype == np.float64 and plain.values.shape == (2, 3, 3)


def test_plain_references_normalize_as_the_general_path(files, refs):
    got = read_plain_references(refs)
    assert got == load_references(refs)
    plain = read_plain_scores(files)
    assert plain is not None and got is not None
    random, reference = load_references(refs)
    want = normalize(load_scores(files), random=random, reference=reference)
    np.testing.assert_array_equal(plain.normalized(*got).values, want.values)  # bit for bit
    with pytest.raises(KeyError):
        plain.normalized({"Pong": 0.0}, {"Pong": 1.0})


@pytest.mark.parametrize(
    "data",
    [
        {"Pong": [1.0, None], "Alien": [1, 2], "Boxing": [1, 2]},  # null: a NaN score
        {"Pong": [1.0, float("nan")], "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": [1.0, float("inf")], "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": [1.0, True], "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": [1.0, "2"], "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": [1.0, 10**400], "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": [], "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": 3.0, "Alien": [1, 2], "Boxing": [1, 2]},
        {"Pong": [1, 2], "Alien": [1, 2]},  # a task missing
        {"Pong": [1, 2], "Alien": [1, 2], "Boxing": [1, 2], "Chess": [1, 2]},  # one more
        [1, 2],
        {},
    ],
)
def test_anything_else_is_left_to_load_scores(tmp_path, files, data):
    other = tmp_path / "other"
    other.mkdir()
    path = other / "X.json"
    path.write_text(json.dumps(data))
    assert read_plain_scores([files[0], path]) is None


def test_files_that_are_not_plain(tmp_path, files):
    bad = tmp_path / "bad.json"
    bad.write_bytes(bytes(range(128, 256)))
    assert read_plain_scores([files[0], bad]) is None
    bad.write_text("{not json")
    assert read_plain_scores([files[0], bad]) is None
    assert read_plain_scores([tmp_path]) is None  # a directory: load_scores lists it
    assert read_plain_scores([files[0], tmp_path / "nope.json"]) is None
    twin = tmp_path / "twin"
    twin.mkdir()
    assert read_plain_scores([files[0], write_json(twin, "DER", DER)]) is None  # same name
    csv = tmp_path / "s.csv"
    csv.write_text("algorithm,task,run,score\nA,t,0,1\n")
    assert read_plain_scores([csv]) is None
    one = {task: runs[:1] for task, runs in DER.items()}
    assert read_plain_scores([write_json(twin, "ONE", one)]) is None  # single-run warning
    assert read_plain_scores([]) is None


@pytest.mark.parametrize(
    "text",
    [
        "\ufefftask,random,reference\nPong,0,1\n",  # a byte-order mark
        "task,random,reference,note\nPong,0,1,x\n",  # another column
        "task, random,reference\nPong,0,1\n",  # spaces in the header
        "task,random,reference\nPong,0,1\n\nAlien,0,1\n",  # a blank row
        "task,random,reference\nPong,0\n",  # a short row
        "task,random,reference\n1942,0,1\n",  # a label pandas reads as a number
        "task,random,reference\nNA,0,1\n",  # ... as missing
        "task,random,reference\nTrue,0,1\n",  # ... as a boolean
        "task,random,reference\n Pong,0,1\n",  # surrounding space
        "task,random,reference\nPong,1e3,1\n",  # not a plain decimal
        "task,random,reference\nPong,0.1234567890123456,1\n",  # 16 significant digits
        "task,random,reference\nPong,-0,1\n",  # a negative zero
        "task,random,reference\nPong,nan,1\n",
        "task,random,reference\nPong,0,1\nPong,0,2\n",  # a repeated task
        "task,random,reference\nPong,1,1\n",  # nothing to normalize by
        "task,random,reference\n",  # no task
    ],
)
def test_references_that_are_not_plain(tmp_path, text):
    path = tmp_path / "refs.csv"
    path.write_text(text, encoding="utf-8")
    assert read_plain_references(path) is None


def test_plain_references_of_other_shapes(tmp_path):
    path = tmp_path / "refs.csv"
    path.write_text('reference,task,random\r\n12,"Ms Pacman",+3\r\n7.50,Up_N-Down,007\r\n')
    assert read_plain_references(path) == load_references(path)
    assert read_plain_references(tmp_path / "refs.tsv") is None
    assert read_plain_references(tmp_path / "nope.csv") is None
