"""Loading problems (VerilogEval layout, built-in package data) and what an agent may see of them."""

import pytest

from proofgym.verilog import Problem, builtin_problems, get_problem, interface, load_problem, load_verilogeval

from ._support import AND_REFERENCE, DATASET, SPEC_TO_RTL, and_problem, requires_dataset


def write_problem(folder, name="Prob900_demo", reference=AND_REFERENCE):
    (folder / f"{name}_prompt.txt").write_text("Implement TopModule: y = a & b.\n")
    (folder / f"{name}_ref.sv").write_text(reference)
    (folder / f"{name}_test.sv").write_text("module tb; endmodule\n")
    return folder / name


def test_load_problem_reads_the_three_files_of_a_prefix(tmp_path):
    problem = load_problem(write_problem(tmp_path))
    assert problem.id == "Prob900_demo" and problem.source == "verilogeval"
    assert "y = a & b" in problem.spec and "RefModule" in problem.reference and "tb" in problem.testbench


def test_a_missing_file_is_named(tmp_path):
    prefix = write_problem(tmp_path)
    (tmp_path / "Prob900_demo_test.sv").unlink()
    with pytest.raises(FileNotFoundError, match="Prob900_demo_test.sv"):
        load_problem(prefix)


def test_load_verilogeval_reads_a_folder_in_id_order(tmp_path):
    write_problem(tmp_path, "Prob902_b")
    write_problem(tmp_path, "Prob901_a")
    assert [p.id for p in load_verilogeval(tmp_path)] == ["Prob901_a", "Prob902_b"]
    with pytest.raises(FileNotFoundError, match="no VerilogEval problems"):
        load_verilogeval(tmp_path / "empty-does-not-exist")


@requires_dataset
def test_the_whole_dataset_loads_from_its_root_or_its_folder():
    assert len(load_verilogeval(DATASET)) == len(load_verilogeval(SPEC_TO_RTL)) == 156


def test_get_problem_takes_a_path_prefix_or_a_builtin_id(tmp_path):
    prefix = write_problem(tmp_path)
    assert get_problem(str(prefix)).id == "Prob900_demo"
    for problem_id, problem in list(builtin_problems().items())[:3]:
        assert get_problem(problem_id) is problem and problem.source == "builtin"
    with pytest.raises(KeyError, match="not a built-in problem id"):
        get_problem("Prob999_nowhere")


def test_builtin_problems_are_complete_problems():
    for problem_id, problem in builtin_problems().items():
        assert isinstance(problem, Problem) and problem.id == problem_id
        assert "RefModule" in problem.reference and "Mismatches" in problem.testbench


def test_interface_is_the_reference_header_renamed_and_nothing_else():
    header = interface(and_problem())
    assert header.startswith("module TopModule (") and header.endswith(");")
    assert "input a" in header and "output y" in header
    assert "RefModule" not in header and "assign" not in header


def test_interface_keeps_parameters():
    problem = and_problem(reference="module RefModule #(parameter W = 4) (input [W-1:0] a, output y);\n"
                                    "  assign y = &a;\nendmodule\n")
    assert interface(problem) == "module TopModule #(parameter W = 4) (input [W-1:0] a, output y);"


def test_interface_of_a_reference_without_refmodule_is_an_error():
    with pytest.raises(ValueError, match="no 'module RefModule'"):
        interface(and_problem(reference="module Other(); endmodule"))
