# Checks tagged `critical` run at least every minute.
package monform.frequency_by_tag

deny contains {"msg": sprintf("%s is tagged critical but runs every %d minutes; critical checks run every minute", [r.address, r.fields.frequency]), "address": r.address, "field": "frequency"} if {
	some r in input.resources
	r.kind == "checks"
	"critical" in object.get(r.fields, "tags", [])
	r.fields.frequency > 1
}
