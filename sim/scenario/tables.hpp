#pragma once
// The field tables of every struct a scenario holds, and the scenario reference generated from
// them (docs/scenario-reference.md is this text; a test keeps the two equal).
#include <string>

#include "sim/scenario/field_table.hpp"

namespace kvsim::scenario {

// Top level: the Scenario struct of sim/scenario/scenario.hpp.
const StructTable& scenario_table();
const StructTable& output_table();
// hardware:, hardware.servers[], hardware.servers[].gpu (preset: gpus.yaml), .gpu.host_link
const StructTable& hardware_table();
const StructTable& kv_tier_table();
const StructTable& profile_params_table();
const StructTable& routing_table();
const StructTable& nvme_drive_table();
const StructTable& storage_node_table();
const StructTable& host_table();
const StructTable& nic_table();
const StructTable& local_nvme_table();
const StructTable& kv_offload_table();
const StructTable& server_table();
const StructTable& gpu_table();
const StructTable& host_link_table();
// model: (preset: models.yaml)
const StructTable& model_table();
const StructTable& engine_table();
const StructTable& compute_table();
const StructTable& roofline_table();
// workload: and its sections.
const StructTable& workload_table();
const StructTable& generation_table();
const StructTable& prompt_input_table();   // a group over GenerationConfig
const StructTable& prompt_output_table();  // a group over GenerationConfig
const StructTable& clients_table();
const StructTable& chat_template_table();
const StructTable& trace_table();
const StructTable& sharegpt_table();

// Markdown reference of every section, key, kind, default, allowed range and meaning.
std::string scenario_reference_markdown();

}  // namespace kvsim::scenario
