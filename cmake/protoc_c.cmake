# protoc_c.cmake - runs protoc-c on one .proto (-DPROTOC_C -DIN -DOUTDIR) and
# fixes what it generates for a method named like a C keyword: the
# Registration service's Register becomes a struct member "register",
# which no C compiler accepts; it is renamed register_ (gpuplane uses the
# messages only, never protobuf-c's service stubs).
get_filename_component(dir ${IN} DIRECTORY)
get_filename_component(name ${IN} NAME_WE)
file(MAKE_DIRECTORY ${OUTDIR})
execute_process(COMMAND ${PROTOC_C} --c_out=${OUTDIR} -I${dir} ${IN} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "protoc-c failed on ${IN}")
endif()
foreach(ext h c)
  file(READ ${OUTDIR}/${name}.pb-c.${ext} text)
  string(REPLACE "(*register)(" "(*register_)(" text "${text}")
  string(REPLACE "## register  }" "## register_  }" text "${text}")
  file(WRITE ${OUTDIR}/${name}.pb-c.${ext} "${text}")
endforeach()
