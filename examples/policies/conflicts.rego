# A change made in the service that the files change too (a conflict:
# applying overwrites it) needs a second look even in CI: the apply needs
# `--policy-override monform.conflicts`, which the plan's JSON and Markdown
# record for the reviewer. An apply in a terminal asks about it anyway.
package monform.conflicts

deny contains {"msg": sprintf("%s: `%s` was changed in the service (to %v) since the last apply, and the files change it to %v: put the service's value in the files, or apply with --policy-override monform.conflicts", [change.address, field.path, field.conflict.service, field.conflict.files]), "address": change.address, "field": field.path} if {
	some change in input.plan.changes
	some field in change.fields
	field.conflict
}
