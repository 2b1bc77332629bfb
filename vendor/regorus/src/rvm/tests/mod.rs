// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

//! RVM test modules

#[cfg(test)]
pub mod instruction_parser;

pub mod test_utils;

#[cfg(test)]
pub mod vm;
