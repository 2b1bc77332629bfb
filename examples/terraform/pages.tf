resource "checkly_private_location" "office" {
  name      = "Berlin office"
  slug_name = "berlin-office"
  icon      = "building"
}

resource "checkly_maintenance_windows" "weekly" {
  name            = "Weekly deploy window"
  starts_at       = "2026-01-04T02:00:00.000Z"
  ends_at         = "2026-01-04T03:00:00.000Z"
  repeat_unit     = "WEEK"
  repeat_interval = 1
  tags            = ["terraform"]
}

resource "checkly_status_page_service" "api" {
  name = "Shop API"
}

resource "checkly_status_page" "public" {
  name          = "Shop status"
  url           = "shop-status"
  default_theme = "DARK"

  card {
    name = "API"
    service_attachment {
      service_id = checkly_status_page_service.api.id
    }
  }
}

resource "checkly_dashboard" "ops" {
  custom_url      = "shop-ops"
  header          = "Shop operations"
  tags            = ["terraform"]
  refresh_rate    = 60
  checks_per_page = 10
}
