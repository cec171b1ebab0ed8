"""What a platform package tests itself with: flatfab's platform contract as a pytest suite
(`conformance`) and the recorded-device cases it collects from (`cases`)."""
