// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

pub mod ast;
pub mod builtins;
#[path = "interpreter.rs"]
pub mod interpreter;
pub mod parser;

#[cfg(test)]
mod tests;
