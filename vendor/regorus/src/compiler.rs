// Copyright (c) Microsoft Corporation.
// Licensed under the MIT License.

//! Compiler-related functionality for Regorus.
//!
//! This module contains utilities and data structures used during
//! the compilation phase to prepare policies for efficient execution.

pub mod context;
pub mod destructuring_planner;
pub mod hoist;
