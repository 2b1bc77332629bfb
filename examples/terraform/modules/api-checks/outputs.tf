output "check_ids" {
  value = { for name, check in checkly_check.endpoint : name => check.id }
}
