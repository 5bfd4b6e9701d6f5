# cmake -DREADELF=... -DOBJCOPY=... -DIN=partial.o -DOUT=out.o -P localize_hidden.cmake
# IN is the library's objects linked into one (ld -r), so their references to each other are
# resolved and local symbols serve them. Writes OUT with every hidden symbol that IN defines
# made local (what stays global is the public API and what the library needs from others) and
# with no COMDAT groups: a group keyed on a local symbol could still be discarded for a program's
# group of the same signature (an inline function in a namespace `cr` of its own, say), leaving
# our references to a discarded section. Within the one object the groups have done their work.
execute_process(COMMAND ${READELF} -sW ${IN} OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "localize_hidden: ${READELF} -sW ${IN} failed")
endif()
string(REPLACE "\n" ";" lines "${table}")
set(names "")
set(count 0)
foreach(line IN LISTS lines)
  # Num: Value Size Type Bind Vis [annotation] Ndx Name; sizes of 100000 and more print in hex
  if(line MATCHES "^ *[0-9]+: [0-9a-f]+ +(0x[0-9a-f]+|[0-9]+) [A-Z_]+ +(GLOBAL|WEAK) +HIDDEN( +\\[[^]]*\\])? +([0-9]+|COM|ABS) ([^ ]+)$")
    set(name "${CMAKE_MATCH_5}") # the next MATCHES resets CMAKE_MATCH_*
    if(NOT name MATCHES "^DW\\.ref\\.")
      string(APPEND names "${name}\n")
      math(EXPR count "${count} + 1")
    endif()
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "localize_hidden: no hidden symbols found in ${IN}; is it the library's objects?")
endif()
file(WRITE ${OUT}.localize ${names})
execute_process(COMMAND ${OBJCOPY} --localize-symbols=${OUT}.localize --remove-section=.group ${IN} ${OUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "localize_hidden: ${OBJCOPY} failed on ${IN}")
endif()
