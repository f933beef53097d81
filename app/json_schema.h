// `vtoe schema`: the scenario keys as JSON Schema (draft 2020-12), so that editors (the YAML
// language server's `# yaml-language-server: $schema=...`) and Python's jsonschema check a
// scenario before vtoe reads it. It is written from the same registry as validation and
// `vtoe keys`; vtoe's own checks stay the stricter ones (units are checked by pattern only, and
// the checks that need several keys or the platform are vtoe validate's).
#pragma once

#include <nlohmann/json.hpp>

#include "config/schema.h"

namespace vtoe::app {

nlohmann::ordered_json scenario_json_schema(const config::Schema& schema);

}  // namespace vtoe::app
