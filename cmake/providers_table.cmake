# providers_table.cmake - turns data/providers.json (the provider catalog)
# into a C source of constant tables for src/io/providers.h: the
# control-plane fees, whether each provider's machines can be Kubernetes
# nodes, and the GPU offers (GPU, form factor, memory, prices on demand and
# spot, per GPU-hour and per node-hour) that a Cluster YAML pool may name
# with `offer:`. Run by the build (CMakeLists.txt) whenever the catalog changes;
# tests/unit/test_cluster_pools.c checks that the table says what the JSON
# says. A value that is not a number or null stops the build.
# Usage: cmake -DIN=data/providers.json -DOUT=providers_table.c -P providers_table.cmake
cmake_minimum_required(VERSION 3.19) # string(JSON)

file(READ "${IN}" json)
get_filename_component(base "${IN}" NAME)

function(c_string out text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  set(${out} "\"${text}\"" PARENT_SCOPE)
endfunction()

# A number, or -1 for null / absent.
function(get_num out)
  string(JSON v ERROR_VARIABLE e GET "${json}" ${ARGN})
  if(e OR v STREQUAL "" OR v STREQUAL "null" OR v MATCHES "NOTFOUND$")
    set(v "-1")
  elseif(NOT v MATCHES "^[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$")
    message(FATAL_ERROR "${base}: expected a number or null at ${ARGN}, got ${v}")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

function(get_text out)
  string(JSON v ERROR_VARIABLE e GET "${json}" ${ARGN})
  if(e OR v MATCHES "NOTFOUND$" OR v STREQUAL "null")
    set(v "")
  endif()
  set(${out} "${v}" PARENT_SCOPE)
endfunction()

string(JSON np LENGTH "${json}" providers)
math(EXPR lastp "${np} - 1")
set(providers "")
set(offers "")
set(noffers 0)
foreach(p RANGE ${lastp})
  get_text(id providers ${p} id)
  get_num(fee providers ${p} control_plane_fee_usd_per_hour)
  get_text(kube providers ${p} kubernetes)
  if(kube STREQUAL "managed")
    set(kube GP_KUBE_MANAGED)
  elseif(kube STREQUAL "byo")
    set(kube GP_KUBE_BYO)
  elseif(kube STREQUAL "none")
    set(kube GP_KUBE_NONE)
  else()
    message(FATAL_ERROR "${base}: expected managed, byo or none at providers ${p} kubernetes, got \"${kube}\"")
  endif()
  c_string(cid "${id}")
  string(APPEND providers "    {${cid}, ${fee}, ${kube}},\n")
  string(JSON no LENGTH "${json}" providers ${p} gpu_offers)
  if(no EQUAL 0)
    continue()
  endif()
  math(EXPR lasto "${no} - 1")
  foreach(o RANGE ${lasto})
    get_text(inst providers ${p} gpu_offers ${o} instance_type)
    get_text(gpu providers ${p} gpu_offers ${o} gpu)
    get_text(date providers ${p} gpu_offers ${o} price_date)
    get_text(form providers ${p} gpu_offers ${o} form_factor)
    get_num(gpn providers ${p} gpu_offers ${o} gpus_per_node)
    get_num(mem providers ${p} gpu_offers ${o} gpu_memory_gb)
    get_num(odg providers ${p} gpu_offers ${o} on_demand_usd_per_gpu_hour)
    get_num(odn providers ${p} gpu_offers ${o} on_demand_usd_per_node_hour)
    get_num(spg providers ${p} gpu_offers ${o} spot_usd_per_gpu_hour)
    get_num(spn providers ${p} gpu_offers ${o} spot_usd_per_node_hour)
    if(gpn STREQUAL "-1")
      set(gpn 0)
    endif()
    if(mem STREQUAL "-1")
      set(mem 0)
    elseif(NOT mem MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${base}: expected a whole number of GB or null at providers ${p} gpu_offers ${o} gpu_memory_gb, got ${mem}")
    endif()
    c_string(cinst "${inst}")
    c_string(cgpu "${gpu}")
    c_string(cform "${form}")
    c_string(cdate "${date}")
    string(APPEND offers "    {${cid}, ${cinst}, ${cgpu}, ${cform}, ${gpn}, ${mem}, ${odg}, ${odn}, ${spg}, ${spn}, ${cdate}},\n")
    math(EXPR noffers "${noffers} + 1")
  endforeach()
endforeach()

file(WRITE "${OUT}" "/* providers_table.c - generated from data/providers.json by
 * cmake/providers_table.cmake at build time; do not edit. The catalog's
 * providers (control-plane fee) and GPU offers (prices; -1 = not known). */
#include \"io/providers.h\"

const struct gp_provider gp_providers[] = {
${providers}};
const size_t gp_nproviders = sizeof gp_providers / sizeof gp_providers[0];

const struct gp_offer gp_offers[] = {
${offers}};
const size_t gp_noffers = sizeof gp_offers / sizeof gp_offers[0];
")
