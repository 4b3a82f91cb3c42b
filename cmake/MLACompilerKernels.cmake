# mla_add_kernels(<target> SPEC <file.mlir> CHIPS <chip>... [EMBED YES|NO]
#                 [PTXAS <path>])
#
# Runs mla-compile at build time to turn SPEC into one C header holding the
# code objects for every chip, adds the header's folder to <target>'s include
# path and links the launcher backends the chips need (gfx* -> HIP, sm_* ->
# CUDA). The header is named after the spec file: SPEC foo.mlir gives
# #include "foo.h", defining foo_create() (identifiers follow the symbol name
# of the spec's mla.decode, which the shipped specs keep equal to the file's).
function(mla_add_kernels target)
  cmake_parse_arguments(MLA "" "SPEC;EMBED;PTXAS" "CHIPS" ${ARGN})
  if(NOT TARGET ${target})
    message(FATAL_ERROR "mla_add_kernels: '${target}' is not a target")
  endif()
  if(NOT MLA_SPEC OR NOT MLA_CHIPS)
    message(FATAL_ERROR "mla_add_kernels(${target}): SPEC <file> and CHIPS <chip>... are required")
  endif()
  if(MLA_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mla_add_kernels(${target}): unexpected arguments ${MLA_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT MLA_EMBED)
    set(MLA_EMBED YES)
  endif()
  string(TOLOWER "${MLA_EMBED}" embed)
  if(NOT embed MATCHES "^(yes|no)$")
    message(FATAL_ERROR "mla_add_kernels(${target}): EMBED must be YES or NO")
  endif()
  get_filename_component(spec "${MLA_SPEC}" ABSOLUTE)
  get_filename_component(stem "${MLA_SPEC}" NAME_WE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/mla_kernels/${target}")
  set(header "${dir}/${stem}.h")

  set(backends)
  foreach(chip IN LISTS MLA_CHIPS)
    if(chip MATCHES "^gfx")
      if(NOT TARGET MLACompiler::mla_launcher_hip)
        message(FATAL_ERROR "mla_add_kernels(${target}): chip ${chip} needs the HIP launcher, "
                            "which this MLACompiler was built without (libamdhip64-dev)")
      endif()
      list(APPEND backends MLACompiler::mla_launcher_hip)
    elseif(chip MATCHES "^sm_")
      if(NOT TARGET MLACompiler::mla_launcher_cuda OR MLACompiler_CUDA_MISSING)
        message(FATAL_ERROR "mla_add_kernels(${target}): chip ${chip} needs the CUDA launcher "
                            "and a CUDA toolkit (CUDAToolkit_ROOT)")
      endif()
      list(APPEND backends MLACompiler::mla_launcher_cuda)
    else()
      message(FATAL_ERROR "mla_add_kernels(${target}): unknown chip '${chip}'")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES backends)

  string(REPLACE ";" "," chips "${MLA_CHIPS}")
  set(extra)
  if(MLA_PTXAS)
    list(APPEND extra --ptxas=${MLA_PTXAS})
  endif()
  add_custom_command(OUTPUT "${header}"
    COMMAND MLACompiler::mla-compile "${spec}" --chip=${chips} --emit=header
            --embed=${embed} --header-name=${stem}.h -o "${dir}" ${extra}
    DEPENDS "${spec}" MLACompiler::mla-compile
    COMMENT "mla-compile ${stem} for ${chips}"
    VERBATIM)
  target_sources(${target} PRIVATE "${header}")
  target_include_directories(${target} PRIVATE "${dir}")
  target_link_libraries(${target} PRIVATE MLACompiler::mla_launcher ${backends})
endfunction()
