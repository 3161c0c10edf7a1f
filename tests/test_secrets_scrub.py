from whathappened.errors import remember_secret, scrub


def test_credentials_in_urls_and_headers_are_masked():
    text = "GET https://admin:hunter22@es.example:9200/_search failed; Authorization: Bearer abcdef123456"
    cleaned = scrub(text)
    assert "hunter22" not in cleaned
    assert "abcdef123456" not in cleaned
    assert "es.example:9200" in cleaned  # the host stays: people need it to act


def test_registered_secrets_are_masked_anywhere():
    remember_secret("Zm9vOmJhcg-registered")
    assert "Zm9vOmJhcg" not in scrub("the server said: invalid key Zm9vOmJhcg-registered (401)")


def test_key_value_shapes():
    for line in ("password=topsecret1", 'api_key: "k-123456789"', "token=tok_abcdefgh"):
        cleaned = scrub(line)
        assert "topsecret1" not in cleaned and "k-123456789" not in cleaned and "tok_abcdefgh" not in cleaned
