terraform {
  required_providers {
    checkly = {
      source  = "checkly/checkly"
      version = "~> 1.0"
    }
  }
}

provider "checkly" {
  # The API key and account come from CHECKLY_API_KEY and CHECKLY_ACCOUNT_ID.
}
