variable "base_url" {
  type = string
}

variable "group_id" {
  type = number
}

variable "channel_id" {
  type = number
}

variable "endpoints" {
  description = "Endpoint name to path"
  type        = map(string)
}

variable "frequency" {
  type    = number
  default = 2
}
