// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

mod condition_parser;
mod error;
mod primary;

pub use condition_parser::{parse_condition_expression, ConditionParser};
pub use error::ConditionParseError;
