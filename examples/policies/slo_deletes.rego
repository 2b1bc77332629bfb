# Deleting (or replacing) a check tagged `slo` needs a second approval:
# an override for the run (`--policy-override monform.slo_deletes`),
# which the plan's JSON and Markdown record for the reviewer.
package monform.slo_deletes

deny contains {"msg": sprintf("%s is tagged slo: %s it only with --policy-override monform.slo_deletes after a second approval", [change.address, verb]), "address": change.address} if {
	some change in input.plan.changes
	startswith(change.address, "checks.")
	change.action in {"delete", "replace"}
	"slo" in object.get(change, "tags", [])
	verb := change.action
}
