"""Learned processes in phonological notation (strgm.models.processes): a transducer
whose weights encode final devoicing is read back as "d → t / _ #"; the untrained,
copying transducer has no process (the negative control)."""

import pytest

from fst_factors.alphabet import Alphabet
from strgm.errors import OptionError
from strgm.models.edit_model import PhonologyEditModel
from strgm.models.processes import learned_processes


def _devoicing(weight):
    """The copy-biased model of {a d t i u} plus ``weight`` on d → t before the word end
    (the right-context id of EOS is the structure's ``bos_eos[2]``)."""
    m = PhonologyEditModel(Alphabet(list("adtiu"))).initial()
    st = m.structure
    eos = st.meta["bos_eos"][2]
    d, t = 2, 3  # labels of d and t
    theta = m.theta.copy()
    theta[st.feature_names.index(("sub_xyR", d, t, eos))] = weight
    return m.with_theta(theta)


def test_final_devoicing_is_read_back_in_notation():
    procs = learned_processes(_devoicing(20.0))
    assert procs and procs[0].notation().startswith("d → t / _ #")
    assert procs[0].probability > 0.99 and procs[0].contexts == procs[0].of_contexts
    assert all(p.right == "#" for p in procs)  # nothing else was learned
    d = procs[0].to_dict()
    assert d["target"] == "d" and d["result"] == "t" and d["rule"] == procs[0].notation()


def test_a_copying_model_has_no_process_and_a_weak_one_is_not_shown():
    assert learned_processes(PhonologyEditModel(Alphabet(list("adtiu"))).initial()) == []
    assert learned_processes(_devoicing(2.0)) == []  # p(d → t / _ #) stays below ½
    assert learned_processes(_devoicing(2.0), min_prob=0.0001)  # but it is there


@pytest.mark.parametrize("kw,name", [({"min_prob": 1.5}, "min_prob"),
                                     ({"min_prob": float("nan")}, "min_prob"),
                                     ({"top": 0}, "top")])
def test_options_are_checked(kw, name):
    with pytest.raises(OptionError, match=name):
        learned_processes(_devoicing(20.0), **kw)
