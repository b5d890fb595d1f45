

@pytest.mark.parametrize("method", ["uniformization", "krylov"])
def test_a_san_too_stiff_to_solve_is_refused_not_crashed(tmp_path, refused, method):
    """Found by tests/test_input_fuzz.py: a demand of 3.8e-306 s is positive, but its rate 2.6e305
    made uniformization ask NumPy for an impossible array (exit 1) and Krylov lose the mass (1e-50)."""
    (tmp_path / "two.yaml").write_text("name: two\ndescription: d\nsource: s\ncpus_per_node: 1\n"
                                       "distances: [[10, 20], [20, 10]]\n")
    model = tmp_path / "m.yaml"
    model.write_text(f"generator: {{model: corr05, topology: {tmp_path / 'two.yaml'}, levels: '2'}}\n"
                     "parameters: {demand: 3.778588256270211e-306}\n")
    refused(f"{model}: ", "san", model, "--times", "0:1:0.5", "--transient", method, "--out", tmp_path / "out.csv")
