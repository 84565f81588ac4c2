"""The virtual table: physics and rendering with exact ground truth, for tests, benchmarks and the demo.

Nothing in the product imports this package. Modules, in the order data flows through them:

- ``params``, ``geometry``, ``actions``: constants; the table's cushions, jaws and pockets; strikes and extras.
- ``physics``: the ``Simulator`` (slide/roll with spin, collisions, cushions, pockets, pins; exact event times).
- ``trajectory``, ``shots``: the sampled outcome, and the exact ``rules.shot.Shot`` records built from it.
- ``layouts``, ``scenario``, ``outcomes``: opening and random layouts; the scenario language; what a shot did.
- ``sensors``, ``table_art``, ``ball_art``, ``occluders``, ``render``: Pi camera modes and the renderer.
- ``clip``, ``make_fixtures``, ``stills``: video + truth files, the committed fixtures, the docs stills.
"""
