# cmake -DREADELF=... -DOBJCOPY=... -DIN=partial.o -DOUT=out.o -P localize_hidden.cmake
# Makes every hidden symbol that IN defines local, but DW.ref.* (the C++ personality routine's
# reference, which programs share by COMDAT group), and writes OUT. IN is the library's objects
# linked into one (ld -r), so their references to each other are already resolved and local
# symbols serve them; what stays global is the public API and what the library needs.
execute_process(COMMAND ${READELF} -sW ${IN} OUTPUT_VARIABLE table RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "localize_hidden: ${READELF} -sW ${IN} failed")
endif()
string(REPLACE "\n" ";" lines "${table}")
set(names "")
foreach(line IN LISTS lines)
  # Num: Value Size Type Bind Vis Ndx Name
  if(line MATCHES "^ *[0-9]+: [0-9a-f]+ +[0-9]+ [A-Z_]+ +(GLOBAL|WEAK) +HIDDEN +([0-9]+|COM|ABS) ([^ ]+)$")
    set(name "${CMAKE_MATCH_3}") # the next MATCHES resets CMAKE_MATCH_*
    if(NOT name MATCHES "^DW\\.ref\\.")
      string(APPEND names "${name}\n")
    endif()
  endif()
endforeach()
if(names STREQUAL "")
  message(FATAL_ERROR "localize_hidden: no hidden symbols found in ${IN}; is it the library's objects?")
endif()
file(WRITE ${OUT}.localize ${names})
execute_process(COMMAND ${OBJCOPY} --localize-symbols=${OUT}.localize ${IN} ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "localize_hidden: ${OBJCOPY} failed on ${IN}")
endif()
