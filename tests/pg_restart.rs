//! The database server restarting mid-run (issue 16): the test's own
//! PostgreSQL cluster (`common::cluster`, never the shared server) is killed
//! like a crashed machine while `payrun run` is paying; payrun must stop or
//! wait, never record a state the provider's books contradict, and the same
//! command after the restart must finish the run with every row paid once.

mod common;

use common::cluster::Cluster;

/// The harness itself: a committed row survives the server's death, a
/// client sees the death as an error, and the restarted server serves.
#[test]
fn the_test_cluster_dies_like_a_machine_and_recovers_its_commits() {
    let Some(c) = Cluster::start("the_test_cluster_dies_like_a_machine_and_recovers_its_commits")
    else {
        return;
    };
    c.create_db("books");
    let mut client = common::pg::connect(&c.url("books"));
    client
        .batch_execute("CREATE TABLE t (n INT); INSERT INTO t VALUES (1)")
        .unwrap();
    c.kill();
    assert!(client.batch_execute("INSERT INTO t VALUES (2)").is_err());
    assert!(postgres::Client::connect(&c.url("books"), postgres::NoTls).is_err());
    c.restart();
    let mut client = common::pg::connect(&c.url("books"));
    let n: i64 = client
        .query_one("SELECT count(*) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}
