"""Liger-Kernel's cross-entropy (the real kernel, from the corpus venv) with its labels declared as
they are: a class in [0, V) or the ignore index -100. The kernel returns early on -100, so with the
union declared it is analysed clean; labels that may reach V (a range wider than the logits) give
TL002 with the label value V as the witness. Skips when `.venv-corpus` is absent."""

from __future__ import annotations

from tests.support.corpus_cli import CORPUS_VENV, check_json, needs_corpus_venv

pytestmark = needs_corpus_venv

LAUNCH = (
    "liger_cross_entropy_kernel[(222,)](X_ptr=fp32[222, 1000], X_stride=1000, Y_ptr=i64[222].values({labels}), "
    "Y_stride=1, weight_ptr={weight}, loss_ptr=fp32[222], z_loss_ptr={z}, loss_stride=1, "
    "token_accuracy_ptr=None, token_accuracy_stride=0, predicted_tokens_ptr=None, predicted_tokens_stride=0, "
    "n_cols=1000, n_non_ignore=190, sum_non_ignore_weight=190, ignore_index=-100, weight_sum={wsum}, "
    "lse_square_scale={lse}, label_smoothing={smooth}, reduction='mean', softcap=None, RETURN_Z_LOSS={rz}, "
    "RETURN_TOKEN_ACCURACY=False, RETURN_PREDICTED_TOKENS=False, BLOCK_SIZE=1024, HAS_WEIGHT={hw}, "
    "HAS_SOFTCAPPING=False, HAS_GRADIENTS=True)"
)
PLAIN = dict(weight="None", z="None", wsum="0.0", lse="0.0", smooth="0.0", rz="False", hw="False")
WEIGHTED = dict(weight="fp32[1000]", z="fp32[222]", wsum="10.0", lse="0.1", smooth="0.1", rz="True", hw="True")


def test_liger_cross_entropy_with_an_ignore_index_in_a_union_is_clean_and_its_wide_twin_is_not(tmp_path):
    cases = [("[(0, 1000), -100]", PLAIN), ("[(0, 1000), -100]", WEIGHTED), ("[(0, 1001), -100]", PLAIN)]
    toml = "".join(
        f'[[launch]]\nmodule = "liger_kernel.ops.cross_entropy"\nlaunch = "{LAUNCH.format(labels=labels, **kw)}"\n\n'
        for labels, kw in cases
    )
    config = tmp_path / "tilelens.toml"
    config.write_text(toml)
    doc = check_json(config, tmp_path, python=CORPUS_VENV / "bin" / "python", timeout=300, cache=False)
    launches = [launch for f in doc["files"] for launch in f["launches"]]
    assert [launch["status"] for launch in launches] == ["analyzed"] * 3
    clean, weighted, wide = launches
    assert clean["diagnostics"] == [] and weighted["diagnostics"] == [], (clean["diagnostics"], weighted["diagnostics"])
    assert clean["value_ranges"] == {"Y_ptr": [[-100, -99], [0, 1000]]}
    codes = {d["code"] for d in wide["diagnostics"]}
    assert codes == {"TL002"} and all(d["witness"]["value"] == 1000 for d in wide["diagnostics"]), wide["diagnostics"]
