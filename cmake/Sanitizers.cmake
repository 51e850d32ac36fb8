# ASan + UBSan for the `dev` preset. UBSan errors abort so that tests fail on undefined behaviour.
if(HEARTH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
