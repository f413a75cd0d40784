# embed.cmake - turns a text file into a C source defining one NUL-terminated
# string, so the built-in demo's YAML files are compiled into the binary.
# Usage: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
get_filename_component(base "${IN}" NAME)
file(WRITE "${OUT}" "/* ${base}, embedded by cmake/embed.cmake; do not edit. */\n#include <stddef.h>\nextern const char ${NAME}[];\nextern const size_t ${NAME}_len;\nconst char ${NAME}[] = {\n${bytes}0x00};\nconst size_t ${NAME}_len = sizeof ${NAME} - 1;\n")
