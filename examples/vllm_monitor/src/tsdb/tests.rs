//! The TSDB source against canned answers of the API.
