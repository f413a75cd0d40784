# cuda_table.cmake - turns data/cuda-driver-compat.json (CUDA toolkit
# releases and their minimum Linux drivers, minor-version compatibility per
# major release, the cuda-compat forward-compatibility matrix, the CUDA
# version each driver branch reports) and data/cuda-images.json (the CUDA
# version of container images) into a C source of constant tables for
# src/io/compat.h. Run by the build (CMakeLists.txt) whenever either file
# changes; tests/unit/test_compat.c checks the tables against the JSON. A
# driver or CUDA version that is not one stops the build.
# Usage: cmake -DIN=data/cuda-driver-compat.json -DIMAGES=data/cuda-images.json
#              -DOUT=cuda_table.c -P cuda_table.cmake
cmake_minimum_required(VERSION 3.19) # string(JSON)

file(READ "${IN}" json)
file(READ "${IMAGES}" images)
get_filename_component(base "${IN}" NAME)
get_filename_component(ibase "${IMAGES}" NAME)

function(c_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# text at the path of doc (json or images), "" for null or absent
function(get_text out doc)
  string(JSON v ERROR_VARIABLE e GET "${${doc}}" ${ARGN})
  if(e OR v MATCHES "NOTFOUND$" OR v STREQUAL "null")
    set(v "")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

function(check_driver file what v)
  if(NOT v MATCHES "^[0-9]+(\\.[0-9]+(\\.[0-9]+)?)?$")
    message(FATAL_ERROR "${file}: expected a driver version like 535.104.05 at ${what}, got \"${v}\"")
  endif()
endfunction()

function(check_cuda file what v)
  if(NOT v MATCHES "^[0-9]+\\.[0-9]+(\\.[0-9]+)?$")
    message(FATAL_ERROR "${file}: expected a CUDA version like 12.4.1 at ${what}, got \"${v}\"")
  endif()
endfunction()

# --- releases --------------------------------------------------------------
string(JSON n LENGTH "${json}" releases)
math(EXPR last "${n} - 1")
set(releases "")
foreach(i RANGE ${last})
  get_text(label json releases ${i} release)
  get_text(version json releases ${i} version)
  get_text(tk json releases ${i} toolkit_driver_linux_min)
  get_text(branch json releases ${i} toolkit_driver_branch)
  get_text(mv json releases ${i} minor_version_compat_linux_min_numeric)
  if(mv STREQUAL "")
    get_text(mv json releases ${i} minor_version_compat_linux_min)
  endif()
  get_text(src json releases ${i} source)
  get_text(note json releases ${i} note)
  if(NOT version MATCHES "^([0-9]+)\\.([0-9]+)\\.([0-9]+)$")
    message(FATAL_ERROR "${base}: expected X.Y.Z at releases ${i} version, got \"${version}\"")
  endif()
  set(maj ${CMAKE_MATCH_1})
  set(min ${CMAKE_MATCH_2})
  set(pat ${CMAKE_MATCH_3})
  if(NOT branch MATCHES "^R([0-9]+)$")
    message(FATAL_ERROR "${base}: expected a branch like R535 at releases ${i} toolkit_driver_branch, got \"${branch}\"")
  endif()
  set(br ${CMAKE_MATCH_1})
  if(NOT tk STREQUAL "")
    check_driver("${base}" "releases ${i} toolkit_driver_linux_min" "${tk}")
  endif()
  check_driver("${base}" "releases ${i} minor_version_compat_linux_min" "${mv}")
  foreach(v label tk mv src note)
    c_string(c${v} "${${v}}")
  endforeach()
  string(APPEND releases "    {.label = ${clabel}, .major = ${maj}, .minor = ${min}, .patch = ${pat},\n"
         "     .toolkit_min = ${ctk}, .branch = ${br}, .minor_compat_min = ${cmv},\n"
         "     .source = ${csrc}, .note = ${cnote}},\n")
endforeach()

# --- minor-version compatibility per major release -------------------------
string(JSON nf LENGTH "${json}" minor_version_compatibility)
math(EXPR last "${nf} - 1")
set(families "")
foreach(i RANGE ${last})
  string(JSON key MEMBER "${json}" minor_version_compatibility ${i})
  if(NOT key MATCHES "^([0-9]+)\\.x$")
    continue() # "source"
  endif()
  set(maj ${CMAKE_MATCH_1})
  get_text(lmin json minor_version_compatibility ${key} linux_min)
  get_text(range json minor_version_compatibility ${key} branch_range)
  check_driver("${base}" "minor_version_compatibility ${key} linux_min" "${lmin}")
  c_string(clmin "${lmin}")
  c_string(crange "${range}")
  string(APPEND families "    {.major = ${maj}, .linux_min = ${clmin}, .branch_range = ${crange}},\n")
endforeach()

# --- forward compatibility: base driver branch -> cuda-compat packages -----
string(JSON nb LENGTH "${json}" forward_compatibility matrix_base_driver_branch_to_compat_package)
math(EXPR last "${nb} - 1")
set(forward "")
set(packages "")
set(npackages 0)
foreach(i RANGE ${last})
  string(JSON key MEMBER "${json}" forward_compatibility matrix_base_driver_branch_to_compat_package ${i})
  if(NOT key MATCHES "^([0-9]+) \\(CUDA ([0-9]+\\.[0-9]+)\\)$")
    message(FATAL_ERROR "${base}: expected \"535 (CUDA 12.2)\" as a forward_compatibility matrix key, got \"${key}\"")
  endif()
  set(br ${CMAKE_MATCH_1})
  c_string(cown "${CMAKE_MATCH_2}")
  string(JSON np LENGTH "${json}" forward_compatibility matrix_base_driver_branch_to_compat_package ${key})
  set(first ${npackages})
  if(np GREATER 0)
    math(EXPR lastp "${np} - 1")
    foreach(j RANGE ${lastp})
      string(JSON pkg GET "${json}" forward_compatibility matrix_base_driver_branch_to_compat_package ${key} ${j})
      if(NOT pkg MATCHES "^cuda-compat-([0-9]+)-([0-9]+)$")
        message(FATAL_ERROR "${base}: expected cuda-compat-X-Y in the forward_compatibility matrix, got \"${pkg}\"")
      endif()
      string(APPEND packages "    {${CMAKE_MATCH_1}, ${CMAKE_MATCH_2}},\n")
      math(EXPR npackages "${npackages} + 1")
    endforeach()
  endif()
  string(APPEND forward "    {.branch = ${br}, .cuda = ${cown}, .first = ${first}, .count = ${np}},\n")
endforeach()

# --- the CUDA version each branch reports (nvidia-smi) ---------------------
string(JSON nr LENGTH "${json}" reported_cuda_version observed_branch_to_reported)
math(EXPR last "${nr} - 1")
set(reported "")
foreach(i RANGE ${last})
  string(JSON key MEMBER "${json}" reported_cuda_version observed_branch_to_reported ${i})
  string(JSON v GET "${json}" reported_cuda_version observed_branch_to_reported ${key})
  if(NOT key MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${base}: expected a branch number in observed_branch_to_reported, got \"${key}\"")
  endif()
  check_cuda("${base}" "observed_branch_to_reported ${key}" "${v}")
  c_string(cv "${v}")
  string(APPEND reported "    {${key}, ${cv}},\n")
endforeach()

# --- images ----------------------------------------------------------------
string(JSON nrules LENGTH "${images}" rules)
math(EXPR last "${nrules} - 1")
set(rules "")
foreach(i RANGE ${last})
  get_text(parse images rules ${i} parse)
  get_text(src images rules ${i} source)
  if(parse STREQUAL "leading-version")
    set(kind GP_IMAGE_TAG_LEADING)
  elseif(parse STREQUAL "cuda-word")
    set(kind GP_IMAGE_TAG_CUDA_WORD)
  else()
    message(FATAL_ERROR "${ibase}: expected leading-version or cuda-word at rules ${i} parse, got \"${parse}\"")
  endif()
  c_string(csrc "${src}")
  string(JSON nrep LENGTH "${images}" rules ${i} repositories)
  math(EXPR lastr "${nrep} - 1")
  foreach(j RANGE ${lastr})
    string(JSON repo GET "${images}" rules ${i} repositories ${j})
    c_string(crepo "${repo}")
    string(APPEND rules "    {.repository = ${crepo}, .parse = ${kind}, .source = ${csrc}},\n")
  endforeach()
endforeach()
string(JSON nngc LENGTH "${images}" ngc)
math(EXPR last "${nngc} - 1")
set(ngc "")
foreach(i RANGE ${last})
  get_text(repo images ngc ${i} repository)
  get_text(rel images ngc ${i} release)
  get_text(cuda images ngc ${i} cuda)
  get_text(conf images ngc ${i} confidence)
  get_text(src images ngc ${i} source)
  get_text(note images ngc ${i} note)
  string(JSON compat GET "${images}" ngc ${i} cuda_compat_in_image)
  if(NOT rel MATCHES "^[0-9][0-9]\\.[0-1][0-9]$")
    message(FATAL_ERROR "${ibase}: expected a release YY.MM at ngc ${i} release, got \"${rel}\"")
  endif()
  check_cuda("${ibase}" "ngc ${i} cuda" "${cuda}")
  if(NOT conf STREQUAL "documented" AND NOT conf STREQUAL "sibling")
    message(FATAL_ERROR "${ibase}: expected documented or sibling at ngc ${i} confidence, got \"${conf}\"")
  endif()
  if(compat STREQUAL "ON")
    set(compat true)
  elseif(compat STREQUAL "OFF")
    set(compat false)
  endif()
  if(NOT compat STREQUAL "true" AND NOT compat STREQUAL "false")
    message(FATAL_ERROR "${ibase}: expected true or false at ngc ${i} cuda_compat_in_image, got \"${compat}\"")
  endif()
  foreach(v repo rel cuda conf src note)
    c_string(c${v} "${${v}}")
  endforeach()
  string(APPEND ngc "    {.repository = ${crepo}, .release = ${crel}, .cuda = ${ccuda}, .confidence = ${cconf},\n"
         "     .compat_in_image = ${compat}, .source = ${csrc}, .note = ${cnote}},\n")
endforeach()

file(WRITE "${OUT}" "/* cuda_table.c - generated from data/cuda-driver-compat.json and
 * data/cuda-images.json by cmake/cuda_table.cmake at build time; do not
 * edit. */
#include \"io/compat.h\"

const struct gp_cuda_release gp_cuda_releases[] = {
${releases}};
const size_t gp_cuda_nreleases = sizeof gp_cuda_releases / sizeof gp_cuda_releases[0];

const struct gp_cuda_family gp_cuda_families[] = {
${families}};
const size_t gp_cuda_nfamilies = sizeof gp_cuda_families / sizeof gp_cuda_families[0];

const struct gp_cuda_package gp_cuda_packages[] = {
${packages}};
const struct gp_cuda_forward gp_cuda_forward[] = {
${forward}};
const size_t gp_cuda_nforward = sizeof gp_cuda_forward / sizeof gp_cuda_forward[0];

const struct gp_cuda_reported gp_cuda_reported[] = {
${reported}};
const size_t gp_cuda_nreported = sizeof gp_cuda_reported / sizeof gp_cuda_reported[0];

const struct gp_image_rule gp_image_rules[] = {
${rules}};
const size_t gp_image_nrules = sizeof gp_image_rules / sizeof gp_image_rules[0];

const struct gp_image_ngc gp_image_ngc[] = {
${ngc}};
const size_t gp_image_nngc = sizeof gp_image_ngc / sizeof gp_image_ngc[0];
")
