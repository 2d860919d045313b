"""Tables that name the same thing agree: the CUDA wheel indexes torch_wheels.json lists and the architecture lists
nvidia_arch.json keeps for them."""

from rocm_doctor.knowledge.store import load


def _number(index: str) -> int:
    return int(index.removeprefix("cu"))


def test_every_cuda_index_a_torch_release_is_on_has_its_arch_list_and_no_other():
    releases = load("torch_wheels.json")["releases"]
    named = {index for row in releases for key in ("cuda_indexes", "cuda_experimental") for index in row.get(key, [])}
    archs = set(load("nvidia_arch.json")["wheel_archs"])
    oldest = min(_number(index) for index in archs)
    assert {index for index in named if _number(index) >= oldest} == archs
    cu129 = [row["torch"] for row in releases if "cu129" in row.get("cuda_indexes", []) + row.get("cuda_experimental", [])]
    assert cu129 == ["2.8"] and "torch 2.8" in load("nvidia_arch.json")["wheel_archs"]["cu129"]["note"]
