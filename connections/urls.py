from django.urls import path

from . import views

app_name = "connections"

urlpatterns = [
    path("services/", views.services, name="services"),
    path("<slug:slug>/", views.connect, name="connect"),
    path("<slug:slug>/callback/", views.callback, name="callback"),
]
