# providers_table.cmake - turns data/providers.json (the provider catalog)
# into a C source of constant tables for src/io/providers.h: the
# control-plane fees, whether each provider's machines can be Kubernetes
# nodes, what its Kubernetes gives (drivers, GPU sharing, interconnect,
# shared storage, spot nodes, autoscaling, billing), and the GPU offers
# (GPU, form factor, memory, prices on demand and spot, per GPU-hour and
# per node-hour, their date and source) that a Cluster YAML pool may name
# with `offer:` and `gpuplane providers` lists. Run by the build (CMakeLists.txt) whenever the catalog changes;
# tests/unit/test_cluster_pools.c checks that the table says what the JSON
# says. A value that is not a number or null stops the build.
# The provider limits of data/provider-limits.json (LIMITS: billing minimum,
# maximum node lifetime, each with its source) join their provider's row.
# Usage: cmake -DIN=data/providers.json -DLIMITS=data/provider-limits.json
#              -DOUT=providers_table.c -P providers_table.cmake
cmake_minimum_required(VERSION 3.19) # string(JSON)

file(READ "${LIMITS}" limits_json)
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

# yes / no / unknown (or absent) as GP_TRI_YES / GP_TRI_NO / GP_TRI_UNKNOWN.
function(get_tri out)
  string(JSON v ERROR_VARIABLE e GET "${json}" ${ARGN})
  if(e OR v MATCHES "NOTFOUND$" OR v STREQUAL "null" OR v STREQUAL "unknown")
    set(v GP_TRI_UNKNOWN)
  elseif(v STREQUAL "yes")
    set(v GP_TRI_YES)
  elseif(v STREQUAL "no")
    set(v GP_TRI_NO)
  else()
    message(FATAL_ERROR "${base}: expected yes, no or unknown at ${ARGN}, got \"${v}\"")
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

get_text(compiled as_of compiled_on)
if(NOT compiled MATCHES "^[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]$")
  message(FATAL_ERROR "${base}: expected a date YYYY-MM-DD at as_of compiled_on, got \"${compiled}\"")
endif()
# The limits by provider id: lim_<id>_<field>.
set(catalog_json "${json}")
set(json "${limits_json}")
string(JSON nl LENGTH "${json}" providers)
math(EXPR lastl "${nl} - 1")
set(limit_ids "")
foreach(l RANGE ${lastl})
  get_text(lid providers ${l} id)
  get_num(lim_${lid}_min providers ${l} billing_minimum_s)
  get_num(lim_${lid}_life providers ${l} max_node_lifetime_h)
  get_text(lim_${lid}_scope providers ${l} max_node_lifetime_scope)
  get_text(lim_${lid}_src providers ${l} max_node_lifetime_source)
  if(lim_${lid}_src STREQUAL "")
    get_text(lim_${lid}_src providers ${l} billing_minimum_source)
  endif()
  if(lim_${lid}_src STREQUAL "")
    message(FATAL_ERROR "provider-limits.json: providers ${l} (${lid}) names no source")
  endif()
  list(APPEND limit_ids ${lid})
endforeach()
set(json "${catalog_json}")
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
  get_text(name providers ${p} name)
  get_text(cat providers ${p} category)
  get_text(product providers ${p} kubernetes_product)
  get_tri(drv providers ${p} gpu_drivers_preinstalled value)
  get_tri(ts providers ${p} gpu_sharing time_slicing)
  get_tri(mig providers ${p} gpu_sharing mig)
  get_tri(mps providers ${p} gpu_sharing mps)
  get_text(ic providers ${p} interconnect type)
  if(ic STREQUAL "unknown")
    set(ic "")
  endif()
  get_num(icbw providers ${p} interconnect bandwidth_gbps)
  get_tri(rwx providers ${p} shared_storage_rwx available)
  get_tri(spot providers ${p} spot_gpu_nodes value)
  get_tri(as providers ${p} autoscaling node_pool_autoscaling)
  get_tri(s0 providers ${p} autoscaling scale_to_zero)
  get_text(bill providers ${p} billing_granularity)
  get_text(src providers ${p} sources 0 url)
  if(id IN_LIST limit_ids)
    set(lmin ${lim_${id}_min})
    set(llife ${lim_${id}_life})
    set(lscope "${lim_${id}_scope}")
    set(lsrc "${lim_${id}_src}")
    list(REMOVE_ITEM limit_ids ${id})
  else()
    set(lmin -1)
    set(llife -1)
    set(lscope "")
    set(lsrc "")
  endif()
  foreach(v id name cat product ic bill src lscope lsrc)
    c_string(c${v} "${${v}}")
  endforeach()
  string(APPEND providers "    {.id = ${cid}, .control_plane_usd_per_hour = ${fee}, .kubernetes = ${kube},\n"
         "     .name = ${cname}, .category = ${ccat}, .product = ${cproduct},\n"
         "     .drivers_preinstalled = ${drv}, .time_slicing = ${ts}, .mig = ${mig}, .mps = ${mps},\n"
         "     .interconnect = ${cic}, .interconnect_gbps = ${icbw}, .rwx_storage = ${rwx},\n"
         "     .spot = ${spot}, .autoscaling = ${as}, .scale_to_zero = ${s0},\n"
         "     .billing = ${cbill}, .source_url = ${csrc},\n"
         "     .billing_minimum_s = ${lmin}, .max_node_lifetime_h = ${llife},\n"
         "     .lifetime_scope = ${clscope}, .limits_source_url = ${clsrc}},\n")
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
    get_text(region providers ${p} gpu_offers ${o} region)
    get_text(url providers ${p} gpu_offers ${o} price_source_url)
    get_num(gpn providers ${p} gpu_offers ${o} gpus_per_node)
    get_num(mem providers ${p} gpu_offers ${o} gpu_memory_gb)
    get_num(odg providers ${p} gpu_offers ${o} on_demand_usd_per_gpu_hour)
    get_num(odn providers ${p} gpu_offers ${o} on_demand_usd_per_node_hour)
    get_num(spg providers ${p} gpu_offers ${o} spot_usd_per_gpu_hour)
    get_num(spn providers ${p} gpu_offers ${o} spot_usd_per_node_hour)
    get_num(avg providers ${p} gpu_offers ${o} observed_average_usd_per_gpu_hour)
    if(gpn STREQUAL "-1")
      set(gpn 0)
    endif()
    if(mem STREQUAL "-1")
      set(mem 0)
    elseif(NOT mem MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${base}: expected a whole number of GB or null at providers ${p} gpu_offers ${o} gpu_memory_gb, got ${mem}")
    endif()
    if(NOT date STREQUAL "" AND NOT date MATCHES "^[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]$")
      message(FATAL_ERROR "${base}: expected a date YYYY-MM-DD or null at providers ${p} gpu_offers ${o} price_date, got ${date}")
    endif()
    foreach(v inst gpu form date region url)
      c_string(c${v} "${${v}}")
    endforeach()
    string(APPEND offers "    {.provider = ${cid}, .instance = ${cinst}, .gpu = ${cgpu}, .form_factor = ${cform},\n"
           "     .gpus_per_node = ${gpn}, .gpu_memory_gb = ${mem}, .on_demand_gpu_hour = ${odg},\n"
           "     .on_demand_node_hour = ${odn}, .spot_gpu_hour = ${spg}, .spot_node_hour = ${spn},\n"
           "     .price_date = ${cdate}, .region = ${cregion}, .price_source_url = ${curl},\n"
           "     .observed_avg_gpu_hour = ${avg}},\n")
    math(EXPR noffers "${noffers} + 1")
  endforeach()
endforeach()

if(limit_ids)
  message(FATAL_ERROR "provider-limits.json: no provider ${limit_ids} in ${base}")
endif()

file(WRITE "${OUT}" "/* providers_table.c - generated from data/providers.json by
 * cmake/providers_table.cmake at build time; do not edit. The catalog's
 * providers (control-plane fee, what their Kubernetes gives) and GPU
 * offers (prices; -1 = not known). */
#include \"io/providers.h\"

const char gp_providers_compiled_on[] = \"${compiled}\";

const struct gp_provider gp_providers[] = {
${providers}};
const size_t gp_nproviders = sizeof gp_providers / sizeof gp_providers[0];

const struct gp_offer gp_offers[] = {
${offers}};
const size_t gp_noffers = sizeof gp_offers / sizeof gp_offers[0];
")
