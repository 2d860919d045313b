"""Library attribution: real device kernel names (as torch.profiler reports them) mapped to libraries."""

import pytest

from rocm_doctor.gpu.kernels.attribution import attribute, backend_of_op, library_of, short_label

NVIDIA = [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     "cuBLAS/cuBLASLt"),
    ("ampere_sgemm_128x64_tn", "cuBLAS/cuBLASLt"),
    ("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN", "cuBLAS/cuBLASLt"),
    ("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(cublasGemvParamsEx)",
     "cuBLAS/cuBLASLt"),
    ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
     "CUTLASS"),
    ("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn",
     "cuDNN"),
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*)", "cuDNN"),
    ("cudnn_generated_fort_native_sdpa_sm90_knob_7_64x128x64_4x1x1_kernel0_0", "cuDNN"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t, "
     "Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t> >, false, true, false, false, true, true, false, false>"
     "(pytorch_flash::Flash_fwd_params)", "flash-attention"),
    ("fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, "
     "cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", "efficient-attention"),
    ("void vector_fft<256u, 8u, 32u, (padding_t)1, (twiddle_t)0, (loadstore_modifier_t)2, (layout_t)0, unsigned int, "
     "float>(kernel_arguments_t<unsigned int>)", "cuFFT"),
    ("void regular_fft<256u, (EPT_t)4, 64u, 2u, 1u, (padding_t)0, (twiddle_t)0>(kernel_arguments_t<unsigned int>)",
     "cuFFT"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
     "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)", "PyTorch native"),
]

AMD = [
    ("Cijk_Ailk_Bljk_SB_MT64x64x16_MI16x16x4x1_SN_1LDSB0_APM1_ABV0_ACED0_AF0EM1_AF1EM1_AMAS3_ASE_ASGT_ASLT_ASAE01_"
     "ASCE01_ASEM1_AAC0_BL1_BS1_DTL0_DTVA0_DVO0_ETSP_EPS1_FL0_GRPM1_GRVW4_GSU1_GSUASB_GLS0_ISA90a_IU1_K1_KLA_"
     "LBSPPA0_LBSPPB0_LPA0_LPB0_LDL1_LRVW4_LWPMn1_LDW0_FMA_MIAV0_MDA2_MO40_NTA0_NTB0_NTC0_NTD0_NEPBS0_NLCA1_NLCB1_"
     "ONLL1_OPLV0_PK0_PAP0_PGR1_PLR1_SIA1_SS0_SU32_SUM0_SUS256_SCIUI1_SPO0_SRVW0_SSO0_SVW4_SNLL0_TT2_32_TLDS0_"
     "USFGROn1_VAW1_VSn1_VW4_WSGRA0_WSGRB0_WS64_WG32_8_1_WGM8", "rocBLAS/Tensile"),
    ("Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
     "GRVWA8_GRVWB8_GSUAMB_IU1_K1_LBSPPA128_LBSPPB128_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_4_MO40_NTn1_"
     "SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_WSGRB0_WG32_8_1", "hipBLASLt"),
    ("rocblas_gemvt_kernel<false, 256, int, float, float const*, float const*, float*>", "rocBLAS/Tensile"),
    ("MIOpenBatchNormFwdTrainSpatial", "MIOpen"),
    ("naive_conv_nonpacked_fwd_nchw_float_double_float", "MIOpen"),
    ("igemm_fwd_gtcx3_nhwc_fp16_bx0_ex1_bt128x128x32_wt32x32x8_ws2x1_wr1x2_ta1x8x2x1_1x4x1x64_tb1x8x2x1_1x4x1x64",
     "MIOpen"),
    ("gridwise_convolution_implicit_gemm_v4r4_nchw_kcyx_nkhw", "MIOpen"),
    ("void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<...>, true, 2>(...)", "CK"),
    ("attn_fwd", "aotriton"),
    ("bwd_kernel_dk_dv", "aotriton"),
    ("fft_rtc_fwd_len64_factors_8_8_wgs_64_tpt_8_sp_ip_CI_unitstride_sbrr", "rocFFT"),
    ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<float, float, float>::operator()>, unsigned int, float, 4> >", "PyTorch native"),
]


@pytest.mark.parametrize("name,library", NVIDIA, ids=[lib + ":" + n[:30] for n, lib in NVIDIA])
def test_nvidia_kernel_names(name, library):
    assert library_of(name, "nvidia") == library


@pytest.mark.parametrize("name,library", AMD, ids=[lib + ":" + n[:30] for n, lib in AMD])
def test_amd_kernel_names(name, library):
    assert library_of(name, "amd") == library


def test_vendor_keeps_rules_apart():
    # "winograd" is a cuDNN name on NVIDIA and a MIOpen solver on AMD.
    assert library_of("winograd_fwd_3x3", "amd") == "MIOpen"
    assert library_of("generateWinogradTilesKernel", "nvidia") == "cuDNN"


def test_unknown_names_stay_unattributed():
    assert library_of("my_custom_triton_kernel_0d1d2d", "nvidia") is None
    result = attribute(["my_custom_triton_kernel_0d1d2d"], vendor="nvidia")
    assert result["libraries"] == [] and result["unattributed"] == 1


@pytest.mark.parametrize("op,label", [
    ("aten::_scaled_dot_product_flash_attention", "flash-attention"),
    ("aten::_scaled_dot_product_efficient_attention", "efficient-attention"),
    ("aten::_scaled_dot_product_cudnn_attention", "cuDNN attention"),
    ("aten::_scaled_dot_product_attention_math", "math (unfused)"),
    ("aten::_scaled_dot_product_flash_attention_for_cpu", "flash-attention (CPU)"),
    ("aten::miopen_convolution", "MIOpen"),
    ("aten::cudnn_convolution", "cuDNN"),
    ("aten::_slow_conv2d_forward", "native slow conv (fallback)"),
    ("aten::mkldnn_convolution", "oneDNN"),
])
def test_aten_ops_name_the_backend(op, label):
    assert backend_of_op(op) == label


def test_attribute_orders_the_math_library_before_pytorch_helpers():
    kernels = [NVIDIA[-1][0], NVIDIA[0][0], NVIDIA[1][0]]
    result = attribute(kernels, ["aten::mm"], vendor="nvidia")
    assert result["libraries"] == ["cuBLAS/cuBLASLt", "PyTorch native"]
    assert short_label(result) == "cuBLAS/cuBLASLt + PyTorch native"
    sdpa = attribute([NVIDIA[8][0]], ["aten::_scaled_dot_product_flash_attention"], vendor="nvidia")
    assert short_label(sdpa) == "flash-attention"


def test_runtime_copies_are_named_and_kept_out_of_the_label():
    names = ["Memcpy HtoD (Pageable -> Device)", "Memset (Device)",
             "nvjet_sm90_hsh_64x48_64x15_2x4_h_bz_NNT"]  # seen on an H200 (torch 2.11+cu130)
    result = attribute(names, vendor="nvidia")
    assert result["libraries"] == ["cuBLAS/cuBLASLt", "runtime copy/memset"]
    assert result["unattributed"] == 0
    assert short_label(result) == "cuBLAS/cuBLASLt"


def _profile_module():
    import importlib.util
    from pathlib import Path

    import rocm_doctor.gpu.kernels as kernels

    spec = importlib.util.spec_from_file_location("_doctor_profile_test", Path(kernels.__file__).with_name("_profile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _event(name, start, end, device=False, correlation=0, linked=0):
    from types import SimpleNamespace

    return SimpleNamespace(name=name, start=start, end=end, device=device, correlation=correlation, linked=linked)


def test_a_kernel_belongs_to_the_case_whose_range_holds_its_launch_not_its_own_timestamp():
    profile = _profile_module()
    mark = profile.MARK
    events = [
        _event(mark + "mm", 100, 200), _event(mark + "fft", 300, 400),
        _event("aten::mm", 110, 190, correlation=1),
        # the GPU clock runs late: the matmul's kernel seems to start inside the FFT's range
        _event("volta_sgemm_128x64_nn", 310, 320, device=True, linked=1),
        _event("aten::_fft_c2c", 305, 390, correlation=2),
        _event("void vector_fft<1024u>", 330, 340, device=True, linked=2),
        # a failed case's kernel, queued before its range closed and run after it; and one with no launcher
        _event("aten::cudnn_convolution", 150, 160, correlation=3),
        _event("implicit_convolve_sgemm", 250, 260, device=True, linked=3),
        _event("Memset (Device)", 350, 351, device=True),
        # the float64 CPU reference in the FFT's range launched nothing: not a backend that ran
        _event("aten::mkldnn_convolution", 350, 360, correlation=4),
    ]
    found = profile.split(events, ["mm", "fft"], gpu=True)
    assert found["mm"]["kernels"] == ["volta_sgemm_128x64_nn", "implicit_convolve_sgemm"]
    assert found["fft"]["kernels"] == ["void vector_fft<1024u>", "Memset (Device)"]
    assert found["mm"]["ops"] == ["aten::cudnn_convolution"]
    assert found["fft"]["ops"] == ["aten::_fft_c2c"]


def test_a_runtime_call_numbered_like_an_operator_does_not_take_its_kernels():
    profile = _profile_module()
    events = [
        _event(profile.MARK + "a", 100, 200), _event(profile.MARK + "b", 300, 400),
        _event("aten::mm", 110, 190, correlation=7),
        _event("cudaLaunchKernel", 320, 321, correlation=7, linked=9),  # a runtime call in case b, numbered 7 too
        _event("sm90_xmma_gemm", 150, 160, device=True, linked=7),
    ]
    assert profile.split(events, ["a", "b"], gpu=True)["a"]["kernels"] == ["sm90_xmma_gemm"]
