# Production checks run from at least two locations (public or private);
# other environments from at least one.
package monform.min_locations

production if input.environment in {"production", "prod"}

minimum := 2 if production

minimum := 1 if not production

environment_name := input.environment if is_string(input.environment)

else := "this project"

deny contains {"msg": sprintf("%s runs from %d location(s); %s needs at least %d", [r.address, n, environment_name, minimum]), "address": r.address, "field": "locations"} if {
	some r in input.resources
	r.kind == "checks"
	n := count(object.get(r.fields, "locations", [])) + count(object.get(r.fields, "privateLocations", []))
	n < minimum
}
