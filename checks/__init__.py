"""Built-in checks. Every module here holds Check subclasses; the registry finds them by walking this package."""
