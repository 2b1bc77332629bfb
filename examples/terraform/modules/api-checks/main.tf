resource "checkly_check" "endpoint" {
  for_each = var.endpoints

  name      = "Payments ${each.key}"
  type      = "API"
  activated = true
  frequency = var.frequency
  group_id  = var.group_id

  request {
    url = "${var.base_url}${each.value}"
    assertion {
      source     = "STATUS_CODE"
      comparison = "LESS_THAN"
      target     = "500"
    }
  }

  alert_channel_subscription {
    channel_id = var.channel_id
    activated  = true
  }
}
