# Browser checks set their own maxResponseTime. A check that does not set
# it gets the service's default (20000 ms), which is what this looks for.
package monform.browser_max_response_time

default_max_response_time := 20000

deny contains {"msg": sprintf("%s is a browser check without its own maxResponseTime (the default %d ms applies)", [r.address, default_max_response_time]), "address": r.address} if {
	some r in input.resources
	r.kind == "checks"
	r.fields.checkType in {"BROWSER", "MULTI_STEP", "PLAYWRIGHT"}
	object.get(r.fields, "maxResponseTime", default_max_response_time) == default_max_response_time
}
