//! Credentials and signing for the tables' storage: STS and the AWS credential chain
//! ([`sts`], [`aws_chain`], [`aws_remote`]), vended credentials rewritten into answers
//! ([`vending`], [`scans`]), the signers getConfig advertised ([`signers`]) and icegate's own
//! signer ([`local_signer`]). It uses no other room: what it answers is bytes and typed errors,
//! which the pipeline turns into responses.

pub mod aws_chain;
pub mod aws_remote;
pub mod local_signer;
pub mod scans;
pub mod signers;
pub mod sts;
pub mod vending;
