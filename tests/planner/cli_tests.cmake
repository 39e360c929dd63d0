# Command-line tests of kvsim sweep / merge, and the sharded sweep on a real single-node Slurm
# cluster (label slurm; needs root, slurm-wlm and munge, as CI has).
if(TARGET kvsim AND TARGET kvsim_planner)
  add_test(NAME planner_sweep_cli
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sweep_cli_test.sh $<TARGET_FILE:kvsim> ${PROJECT_SOURCE_DIR})
  set_tests_properties(planner_sweep_cli PROPERTIES LABELS "planner;cli" TIMEOUT 300)
  add_test(NAME planner_slurm
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/slurm_test.sh $<TARGET_FILE:kvsim> ${PROJECT_SOURCE_DIR})
  set_tests_properties(planner_slurm PROPERTIES LABELS slurm TIMEOUT 280 RUN_SERIAL TRUE)
endif()
# kvsim map: kill and rerun, outputs that agree, bad input.
if(TARGET kvsim AND TARGET kvsim_planner)
  add_test(NAME planner_map_cli
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/map_cli_test.sh $<TARGET_FILE:kvsim> ${PROJECT_SOURCE_DIR})
  set_tests_properties(planner_map_cli PROPERTIES LABELS "planner;cli" TIMEOUT 300)
endif()
# The maps of docs/offload.md regenerate from the commands stored with them (one shard).
if(TARGET kvsim AND TARGET kvsim_planner)
  add_test(NAME planner_map_docs
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/map_docs_test.sh $<TARGET_FILE:kvsim> ${PROJECT_SOURCE_DIR})
  set_tests_properties(planner_map_docs PROPERTIES LABELS "planner;cli;docs" TIMEOUT 600)
endif()
