"""symgrad.caches.Recent: the one policy of the compiled-code and structure caches (most recently used kept)."""
from symgrad.caches import Recent


def test_keep_forgets_the_least_recently_used_beyond_the_limit():
    cache, evicted = Recent(2), []
    cache.keep("a", 1)
    cache.keep("b", 2)
    assert cache.used("a") == 1  # now the newest: "b" is the oldest
    assert cache.keep("c", 3, lambda key, value: evicted.append((key, value))) == 3
    assert list(cache.items()) == [("a", 1), ("c", 3)] and evicted == [("b", 2)]


def test_get_does_not_reorder_and_a_missing_key_gives_the_default():
    cache = Recent(2)
    cache.keep("a", None)  # a stored None is an entry, told from a missing key by the default
    cache.keep("b", 2)
    assert cache.get("a", 0) is None and cache.used("z", "missing") == "missing"
    assert list(cache) == ["a", "b"]
    cache.keep("a", 1)  # stored again: the newest, not a second entry
    assert list(cache.items()) == [("b", 2), ("a", 1)]


def test_a_limit_of_one_keeps_the_last_stored():
    cache = Recent(1)
    for key in range(5):
        cache.keep(key, key)
    assert dict(cache) == {4: 4}
