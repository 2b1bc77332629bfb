resource "checkly_alert_channel" "oncall" {
  email {
    address = var.oncall_email
  }
  send_recovery = true
  send_failure  = true
  send_degraded = false
}

resource "checkly_alert_channel" "chatops" {
  webhook {
    name           = "Chat ops"
    url            = "https://hooks.example.com/monitoring"
    method         = "POST"
    webhook_secret = var.webhook_secret
  }
}

resource "checkly_snippet" "auth" {
  name   = "Fetch a token"
  script = <<-EOT
    const token = process.env.API_TOKEN;
    request.headers['Authorization'] = `Bearer $${token}`;
  EOT
}

resource "checkly_check_group" "production" {
  name        = "Production"
  activated   = true
  concurrency = 2
  locations   = local.locations
  tags        = local.tags

  alert_channel_subscription {
    channel_id = checkly_alert_channel.oncall.id
    activated  = true
  }
}

resource "checkly_environment_variable" "api_token" {
  key    = "API_TOKEN"
  value  = var.api_token
  secret = true
}

resource "checkly_environment_variable" "base_url" {
  key   = "BASE_URL"
  value = var.base_url
}

# One URL monitor per page.
resource "checkly_url_monitor" "pages" {
  for_each = var.pages

  name      = "Page ${each.key}"
  activated = true
  frequency = 5
  group_id  = checkly_check_group.production.id

  request {
    url = "${var.base_url}${each.value}"
    assertion {
      source     = "STATUS_CODE"
      comparison = "EQUALS"
      target     = "200"
    }
  }
}

resource "checkly_check" "api_health" {
  name             = "API health"
  type             = "API"
  activated        = true
  frequency        = 1
  group_id         = checkly_check_group.production.id
  setup_snippet_id = checkly_snippet.auth.id
  description      = upper("health of the ${local.team} API")

  request {
    method = "GET"
    url    = "${var.base_url}/api/health"
    headers = {
      Accept        = "application/json"
      Authorization = "Bearer {{API_TOKEN}}"
    }
    assertion {
      source     = "STATUS_CODE"
      comparison = "EQUALS"
      target     = "200"
    }
    assertion {
      source     = "JSON_BODY"
      property   = "$.status"
      comparison = "EQUALS"
      target     = "ok"
    }
  }

  alert_channel_subscription {
    channel_id = checkly_alert_channel.chatops.id
    activated  = true
  }

  lifecycle {
    ignore_changes = [description]
  }
}

resource "checkly_check" "login" {
  name      = "Login journey"
  type      = "BROWSER"
  activated = true
  frequency = 10
  locations = local.locations
  script    = file("${path.module}/scripts/login.js")
}

resource "checkly_heartbeat_monitor" "nightly_backup" {
  name      = "Nightly backup"
  activated = true
  tags      = local.tags

  heartbeat {
    period      = 1
    period_unit = "days"
    grace       = 2
    grace_unit  = "hours"
  }
}

# Two database replicas.
resource "checkly_tcp_monitor" "database" {
  count = 2

  name      = "Database replica ${count.index}"
  activated = true
  frequency = 1
  locations = ["eu-west-1"]

  request {
    hostname = "db-${count.index}.internal.example.com"
    port     = 5432
  }
}

data "checkly_static_ips" "all" {}

module "payments" {
  source     = "./modules/api-checks"
  base_url   = "${var.base_url}/payments"
  group_id   = checkly_check_group.production.id
  channel_id = checkly_alert_channel.oncall.id
  endpoints = {
    charges = "/v1/charges"
    refunds = "/v1/refunds"
  }
}
