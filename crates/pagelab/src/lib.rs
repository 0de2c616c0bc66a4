//! pagelab core (being written).
