variable "base_url" {
  description = "Where the shop is served"
  type        = string
  default     = "https://shop.example.com"
}

variable "pages" {
  description = "Pages checked from the outside: name to path"
  type        = map(string)
  default = {
    home    = "/"
    pricing = "/pricing"
    login   = "/login"
  }
}

variable "oncall_email" {
  type    = string
  default = "oncall@example.com"
}

variable "api_token" {
  description = "Token the API checks send"
  type        = string
  sensitive   = true
}

variable "webhook_secret" {
  type      = string
  sensitive = true
}

locals {
  team      = "shop"
  locations = ["eu-west-1", "us-east-1"]
  tags      = ["team:${local.team}", "terraform"]
}
