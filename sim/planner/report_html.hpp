#pragma once
// The plan as one self-contained HTML page (inline CSS and SVG, no scripts, nothing fetched):
// the ranked table, for each SLO term its metric against load per tier variant with the SLO as a
// line (every probe of the search, seeds aggregated), and the cost per option ($/h, $/M output
// tokens, users per $/h). A planner opens it without kvsim.
#include <ostream>

#include "sim/planner/plan.hpp"

namespace kvsim::planner {

void write_plan_html(std::ostream& os, const PlanResult& plan);

}  // namespace kvsim::planner
