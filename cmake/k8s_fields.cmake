# k8s_fields.cmake - turns data/k8s-fields.txt (the fields Kubernetes defines
# for every kind the manifest reader accepts, generated from the Kubernetes
# OpenAPI by scripts/gen_k8s_fields.py) into a C source of constant tables
# for src/io/k8s_schema.h, so the build needs neither python nor the
# OpenAPI documents. A malformed line, an unknown field kind, a type used
# but not defined or fields out of order stop the build with the line.
# Usage: cmake -DIN=data/k8s-fields.txt -DOUT=k8s_fields.c -P k8s_fields.cmake
cmake_minimum_required(VERSION 3.19)

get_filename_component(base "${IN}" NAME)
file(STRINGS "${IN}" lines)

# First pass: number the types (they are referred to by index).
set(ntypes 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^type ([^ ]+)$")
    set(idx_${CMAKE_MATCH_1} ${ntypes})
    math(EXPR ntypes "${ntypes} + 1")
  endif()
endforeach()
if(ntypes EQUAL 0)
  message(FATAL_ERROR "${base}: no types")
endif()

set(kinds "")
set(fields "")
set(types "")
set(nfields 0)
set(type "")
set(prev "")
set(lineno 0)
foreach(line IN LISTS lines)
  math(EXPR lineno "${lineno} + 1")
  if(line MATCHES "^#" OR line STREQUAL "")
    continue()
  endif()
  if(line MATCHES "^kind ([A-Za-z]+) ([a-z0-9./-]+) ([^ ]+)$")
    set(t "${CMAKE_MATCH_3}")
    if(NOT DEFINED idx_${t})
      message(FATAL_ERROR "${base}:${lineno}: type ${t} is not defined")
    endif()
    string(APPEND kinds "    {\"${CMAKE_MATCH_1}\", \"${CMAKE_MATCH_2}\", ${idx_${t}}},\n")
  elseif(line MATCHES "^type ([^ ]+)$")
    if(NOT type STREQUAL "")
      math(EXPR count "${nfields} - ${first}")
      string(APPEND types "    {\"${type}\", ${first}, ${count}},\n")
    endif()
    set(type "${CMAKE_MATCH_1}")
    set(first ${nfields})
    set(prev "")
  elseif(line MATCHES "^  ([A-Za-z0-9_$-]+) (scalar|scalars|map|any)$")
    set(name "${CMAKE_MATCH_1}")
    string(TOUPPER "${CMAKE_MATCH_2}" k)
    if(NOT prev STREQUAL "" AND NOT prev STRLESS name)
      message(FATAL_ERROR "${base}:${lineno}: fields out of order (${prev}, ${name})")
    endif()
    set(prev "${name}")
    string(APPEND fields "    {\"${name}\", GP_K8S_${k}, 0},\n")
    math(EXPR nfields "${nfields} + 1")
  elseif(line MATCHES "^  ([A-Za-z0-9_$-]+) (object|list|mapof) ([^ ]+)$")
    set(name "${CMAKE_MATCH_1}")
    string(TOUPPER "${CMAKE_MATCH_2}" k)
    set(t "${CMAKE_MATCH_3}")
    if(NOT DEFINED idx_${t})
      message(FATAL_ERROR "${base}:${lineno}: type ${t} is not defined")
    endif()
    if(NOT prev STREQUAL "" AND NOT prev STRLESS name)
      message(FATAL_ERROR "${base}:${lineno}: fields out of order (${prev}, ${name})")
    endif()
    set(prev "${name}")
    string(APPEND fields "    {\"${name}\", GP_K8S_${k}, ${idx_${t}}},\n")
    math(EXPR nfields "${nfields} + 1")
  else()
    message(FATAL_ERROR "${base}:${lineno}: expected a kind, type or field line, got: ${line}")
  endif()
endforeach()
math(EXPR count "${nfields} - ${first}")
string(APPEND types "    {\"${type}\", ${first}, ${count}},\n")

file(WRITE "${OUT}.tmp"
  "/* ${base}, compiled by cmake/k8s_fields.cmake; do not edit. */\n"
  "#include \"io/k8s_schema.h\"\n\n"
  "const struct gp_k8s_field gp_k8s_fields[] = {\n${fields}};\n"
  "const struct gp_k8s_type gp_k8s_types[] = {\n${types}};\n"
  "const struct gp_k8s_root gp_k8s_roots[] = {\n${kinds}};\n"
  "const size_t gp_k8s_ntypes = sizeof gp_k8s_types / sizeof gp_k8s_types[0];\n"
  "const size_t gp_k8s_nroots = sizeof gp_k8s_roots / sizeof gp_k8s_roots[0];\n")
file(RENAME "${OUT}.tmp" "${OUT}")
